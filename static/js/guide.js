// The walkthrough guide (issue 33, item 3): a library story told step by step, as the seed
// articles tell it. The band under "What to watch" lists the steps; the current one is the last
// whose moment the clock of the frame on screen has reached, so it follows the state (a replay
// seeking back moves it back). Each step names the Kafka method or config that does it, as Kafka
// writes it. A step's button jumps there: the replay seeks, the live page runs as fast as possible
// up to it (restarting first for a moment already past). "Pause at each step" stops the run at the
// next step's moment. The words come from /api/walkthroughs in the page's language (app/guides).
import { h, clear, setText } from "./dom.js";
import { getJSON } from "./http.js";
import { seconds } from "./format.js";
import { t, lang } from "./i18n.js";

/** The index of the current step at `tMs`: the last step whose moment has come (-1: none yet). */
export function currentStep(steps, tMs) {
  let i = -1;
  for (let k = 0; k < steps.length; k++) if (steps[k].t_ms <= tMs) i = k;
  return i;
}

/** The walkthrough of the run on screen: same story name and era as the library story (a story
 *  rerun under another era is retold with another name, and its steps would not hold). */
export function walkFor(walks, meta) {
  if (!meta) return null;
  return walks.find(w => w.story_name === meta.name && w.kafka_version === meta.kafka_version) || null;
}

export function createGuide(app) {
  const replay = document.body.dataset.mode === "replay";
  const store = app.store;
  let walks = [], walk = null, shown = -2, jumping = null, sentPauseAt = null, lastIndex = -1;

  const steps = h("div.gsteps", { role: "list" });
  const detail = h("div.gdetail", { "aria-live": "polite" });
  const pauseBox = h("input", { type: "checkbox", id: "guide-pause", onchange: () => { sentPauseAt = undefined; sync(); } });
  const title = h("span.gtitle");
  const section = h("section.guide#guide", { hidden: true, "aria-label": t("Walkthrough") },
    h("div.ghead", null, h("span.what", { text: t("Walkthrough") }), title,
      h("label.gpause.small", { title: t("Stop the run when it reaches the next step") }, pauseBox, h("span", { text: t("pause at each step") }))),
    steps, detail);
  const story = document.getElementById("story");
  if (story) story.after(section);

  getJSON(`/api/walkthroughs?lang=${encodeURIComponent(lang())}`).then(reply => {
    walks = (reply && reply.walkthroughs) || [];
    shown = -2;
    pick();
  });

  function pick() {
    const next = walkFor(walks, store.meta);
    if (next !== walk) {
      walk = next;
      shown = -2;
      section.hidden = !walk;
      if (walk) build();
    }
    sync(false);
  }

  function build() {
    setText(title, `${walk.title} · ${walk.article}`);
    clear(steps);
    walk.steps.forEach((s, i) => steps.append(h("button.gstep", { type: "button", role: "listitem", dataset: { i: String(i) },
      title: t("Jump to step {n} ({t}): {title}", { n: i + 1, t: seconds(s.t_ms), title: s.title }), onclick: () => jump(i) },
      h("span.gnum", { text: String(i + 1) }), h("span.gname", { text: s.title }))));
  }

  function show(i) {
    shown = i;
    for (const b of steps.children) {
      const current = Number(b.dataset.i) === i;
      b.classList.toggle("current", current);
      b.classList.toggle("done", Number(b.dataset.i) < i);
      if (current) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
    }
    clear(detail);
    const s = walk.steps[Math.max(0, i)];
    const head = i < 0 ? t("First step at {t}", { t: seconds(s.t_ms) })
      : t("Step {n} of {count} · {t}", { n: i + 1, count: walk.steps.length, t: seconds(s.t_ms) });
    detail.append(h("span.gwhen.dim", { text: head }), h("strong.gsteptitle", { text: s.title }),
      h("span.gtext", { text: s.text }), h("code.gkafka", { text: s.kafka, title: t("the Kafka method or config this step shows") }));
    detail.classList.toggle("ahead", i < 0);
  }

  /** Keep the highlight on the clock's step; with "pause at each step", stop at the next one. */
  function sync() {
    if (!walk || !store.clock) return;
    const now = store.clock.t_ms;
    const i = currentStep(walk.steps, now);
    if (i !== shown) show(i);
    if (jumping !== null && now >= jumping) jumping = null;
    const next = walk.steps[i + 1];
    const want = pauseBox.checked && next && jumping === null ? next.t_ms : null;
    if (replay) {                             // the replay plays on this page: stop on the step passed
      const passed = app.replay && app.replay.playing && pauseBox.checked && i > lastIndex && i >= 0;
      lastIndex = i;
      if (passed) { app.pause(); app.seek(walk.steps[i].t_ms); }
      return;
    }
    if (jumping !== null) return;             // run_to owns the pause until the clock gets there
    if (want === sentPauseAt || store.clock.finished) return;
    sentPauseAt = want;
    if (want !== null || store.clock.pause_at != null) app.control("pause_at", want);
  }

  async function jump(i) {
    const target = walk.steps[i].t_ms;
    if (replay) { app.seek(target); return; }
    const clock = store.clock;
    if (!clock) return;
    if (clock.t_ms === target) return;
    if (clock.t_ms > target || clock.finished) {
      if (!(await app.control("restart"))) return;
      if (target === 0) return;
    }
    jumping = target;
    sentPauseAt = target;
    if (!(await app.control("run_to", target))) jumping = null;
  }

  function render(s, changes) {
    if (changes.flags.meta) pick();
    else sync();
  }
  return { render, jump, section };
}

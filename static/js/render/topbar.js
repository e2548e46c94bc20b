// The top bar: scenario, era, run controls (from the actions table), speed, simulated clock.
import { h, setText, setClass } from "../dom.js";
import { ACTIONS, isEnabled, labelOf, runAction, keyLabel } from "../actions.js";
import { seconds, speed as fmtSpeed } from "../format.js";
import { speedFromSlider, sliderFromSpeed } from "../geometry.js";
import { icon as svgIcon } from "../icons.js";
import { eraOption } from "../kafka.js";
import { t } from "../i18n.js";
import { storyName, storyDescription } from "../i18n_story.js";

export function createTopbar(app) {
  const toolbar = document.getElementById("toolbar");
  const buttons = [];
  for (const a of ACTIONS.filter(x => x.toolbar)) {
    const b = h("button", { type: "button", dataset: { action: a.id }, onclick: () => runAction(a, { app, store: app.store }) });
    toolbar.appendChild(b);
    buttons.push([a, b]);
  }
  const maxBtn = h("button", { type: "button", dataset: { action: "max" }, title: t("As fast as possible (m)"), text: t("max"),
    onclick: () => runAction(ACTIONS.find(a => a.id === "max"), { app, store: app.store }) });
  const range = document.getElementById("speed-range");
  range.after(maxBtn);
  range.addEventListener("input", () => setText(document.getElementById("speed-label"), fmtSpeed(speedFromSlider(Number(range.value)))));
  range.addEventListener("change", () => app.setSpeed(speedFromSlider(Number(range.value))));
  const era = document.getElementById("era-select");
  era.addEventListener("change", () => app.reconfigure({ kafka_version: era.value }));
  const storyEl = document.getElementById("story");
  const storyText = document.getElementById("story-text"), storyMore = document.getElementById("story-more");
  document.getElementById("story-toggle").addEventListener("click", e => {
    storyEl.classList.toggle("collapsed");
    e.currentTarget.textContent = storyEl.classList.contains("collapsed") ? t("show") : t("hide");
    storyMore.hidden = storyEl.classList.contains("collapsed") || !storyLong();
  });
  storyMore.addEventListener("click", () => {
    storyText.classList.toggle("clamped");
    storyMore.textContent = storyText.classList.contains("clamped") ? t("more") : t("less");
  });
  /** Whether the guide has more than its two clamped lines (one layout read, on a new story). */
  function storyLong() {
    if (!storyText.classList.contains("clamped")) return true;
    return storyText.scrollHeight > storyText.clientHeight + 2;
  }

  let notes = {};
  function setVersions(versions, eraNotes) {
    notes = eraNotes || {};
    era.replaceChildren(...versions.map(v => eraOption(v, notes[v])));
  }

  function render(store, changes) {
    const c = store.clock;
    for (const [a, b] of buttons) {
      const label = labelOf(a, store);
      const icon = typeof a.icon === "function" ? a.icon(store) : a.icon;
      if (b.__icon !== icon) { b.__icon = icon; b.replaceChildren(svgIcon(icon)); }
      b.title = t("{label} ({key})", { label, key: keyLabel(a) });
      b.setAttribute("aria-label", label);
      b.disabled = !isEnabled(a, store);
    }
    if (changes.flags.meta && store.meta) {
      const nameEl = document.getElementById("scenario-name");
      const name = storyName(store.meta.name);        // the story's words in the page's language
      setText(nameEl, name);
      nameEl.title = name;                             // the whole title, when the button cuts it
      document.title = `${name} — ISR Lab`;
      setText(storyText, storyDescription(store.meta.description) || t("A cluster of your own: break it and watch what Kafka does."));
      storyMore.hidden = storyEl.classList.contains("collapsed") || !storyLong();
      if (era.value !== store.meta.kafka_version) era.value = store.meta.kafka_version;
      const note = notes[store.meta.kafka_version];
      era.title = note ? t("kafka_version {v} (rules of {rules}): {text}", { v: store.meta.kafka_version, rules: note.rules_of, text: note.text }) : "kafka_version";
    }
    if (!c) return;
    setText(document.getElementById("clock-time"), seconds(c.t_ms));
    setText(document.getElementById("clock-total"), "/ " + seconds(c.duration_ms));
    document.getElementById("progress-bar").style.width = (100 * c.t_ms / c.duration_ms).toFixed(2) + "%";
    const reasons = { violation: t("paused: violation"), step: t("stepping"), "record limit": t("paused: record limit"), error: t("paused: error") };
    const state = c.finished ? t("finished") : c.playing ? t("playing") : reasons[c.paused_reason] || t("paused");
    const pill = document.getElementById("clock-state");
    setText(pill, state);
    pill.className = "state-pill" + (c.playing ? " playing" : "") + (["violation", "error", "record limit"].includes(c.paused_reason) ? " violation" : "");
    // a room gets a fair share of the server's simulation time: a big cluster runs slower than asked
    const tooBig = c.behind && c.speed !== "max" && c.actual_speed < 0.9 * c.speed;
    const actual = !c.playing ? "" : c.speed === "max" ? t("actual {speed} (as fast as possible)", { speed: fmtSpeed(Math.max(0, c.actual_speed)) })
      : tooBig ? t("running at {speed} — cluster too large for the {asked} asked", { speed: fmtSpeed(Math.max(0, c.actual_speed)), asked: fmtSpeed(c.speed) })
      : t("actual {speed}", { speed: fmtSpeed(Math.max(0, c.actual_speed)) });
    setText(document.getElementById("clock-actual"), actual);
    if (document.activeElement !== range) {
      range.value = String(sliderFromSpeed(c.speed));
      setText(document.getElementById("speed-label"), fmtSpeed(c.speed));
    }
    setClass(maxBtn, "primary", c.speed === "max");
    setText(document.getElementById("viewers"), c.viewers > 1 ? t("{n} watching", { n: c.viewers }) : "");
    const notice = document.getElementById("notice");
    notice.hidden = !c.notice;
    setText(notice, c.notice || "");
    document.getElementById("download-link").href = `/api/rooms/${encodeURIComponent(c.room)}/scenario.json`;
  }
  return { render, setVersions };
}

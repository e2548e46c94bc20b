// The replay bar: scrubber with the run's marks, steps, play, speed, fork, link, save/compare.
import { h, setText } from "../dom.js";
import { seconds, speed as fmtSpeed } from "../format.js";
import { storyMarks } from "./marks.js";
import { t } from "../i18n.js";

export const SPEEDS = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 300];
const MARKED = ["leader_elected", "isr_shrink", "truncation", "broker_stopped", "fault", "partition_offline"];

/** `page` gives what the buttons do: forkMenu(anchor), shareLink(), saveScenarioRun(), step(dir)
 *  (one visible event), and the narration strip to show under the bar. */
export function createBar(data, cursor, page) {
  const R = cursor.R;
  const bar = document.getElementById("replay-bar");
  const scrub = h("input", { type: "range", min: "0", max: String(data.end_ms), step: "1", value: "0", id: "replay-scrub",
    "aria-label": t("moment of the run"), oninput: e => cursor.jump({ t: Number(e.target.value) }) });
  const marks = h("div.replay-marks", { id: "replay-marks" });
  const timeLabel = h("span.mono", { id: "replay-time" });
  const playBtn = h("button", { type: "button", id: "replay-play", title: t("Play / pause (Space)"), onclick: () => (R.playing ? cursor.pause() : cursor.play()) });
  const speedSel = h("select", { id: "replay-speed", "aria-label": t("replay speed"), onchange: e => cursor.setSpeed(e.target.value) },
    ...SPEEDS.map(s => h("option", { value: String(s), text: fmtSpeed(s) })));
  speedSel.value = "1";
  const status = h("span.dim.small", { id: "replay-status" });
  const button = (id, text, title, onclick, cls) => h("button", { type: "button", id, text, title, onclick, class: cls });
  bar.append(
    h("span.replay-badge", { text: (data.saved ? t("replay") : t("link")).toUpperCase(), title: data.saved ? t("a saved run") : t("a run from a scenario link (not saved)") }),
    h("span.replay-title", { id: "replay-title", text: data.title, title: data.title }),
    button("replay-start", "|◀", t("Start (Home)"), () => cursor.jump({ t: 0 })),
    button("replay-back", t("◀ step"), t("Back to the previous event the timeline shows (b, ←)"), () => page.step(-1)),
    playBtn,
    button("replay-forward", t("step ▶"), t("On to the next event the timeline shows (n, →)"), () => page.step(1)),
    button("replay-end", "▶▶|", t("End (End)"), () => cursor.jump({ t: R.end })),
    speedSel,
    h("div.replay-track", null, marks, scrub),
    timeLabel,
    button("replay-fork", t("Fork…"), t("Continue live from this moment (with other actions, or under another era)"), e => page.forkMenu(e.currentTarget), "primary"),
    button("replay-link", t("Copy link"), t("Copy a link to this moment, with the highlighted partition and the selected broker"), () => page.shareLink()),
    data.saved ? h("a.button.ghost", { id: "replay-compare", href: `/compare?a=${encodeURIComponent(String(data.run))}`, text: t("Compare…") })
      : button("replay-save", t("Save"), t("Save this run in the runs list"), page.saveScenarioRun),
    h("a.button.ghost", { href: "/runs", text: t("Runs") }),
    status, page.narration);

  function render() {
    if (document.activeElement !== scrub) scrub.value = String(R.t);
    setText(timeLabel, `${seconds(R.t)} / ${seconds(R.end)}`);
    setText(playBtn, R.playing ? t("❚❚ pause") : t("▶ play"));
    setText(status, R.requests === 0 ? t("preparing the replay (its first opening re-simulates the run once)…")
      : t("event {n}", { n: R.historyLen }) + (R.lastMs ? ` · ${R.lastMs.toFixed(0)} ms` : ""));
    bar.dataset.t = String(R.t);
    bar.dataset.playing = R.playing ? "1" : "0";
    page.narrate();
  }

  function drawMarks(story, violations) {
    marks.replaceChildren(...storyMarks(story, violations, R.end, { types: MARKED, limit: 400,
      onEvent: i => cursor.jump({ event: i }), onViolation: t => cursor.jump({ t }) }));
  }

  return { render, drawMarks };
}

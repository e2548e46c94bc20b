// The replay page: a saved run (or a scenario link) in the live page's own view. Frames come
// from this viewer's cursor on the server (cursor.js) instead of the live socket, and go to the
// same view (view.js) the live page draws with. Acting on the cluster is not possible in a
// replay: "Fork" continues live from the moment shown. This module wires the cursor, the replay
// bar, the read-only answers to the renderers' requests, keys, and the compare page's frames.
import { followJob } from "../jobs.js";
import { getJSON, postJSON, settleJob } from "../http.js";
import { createStore } from "../store.js";
import { errorText, seconds } from "../format.js";
import { createView, pageKey } from "../view.js";
import { createCursor } from "./cursor.js";
import { createBar, SPEEDS } from "./bar.js";
import { toast } from "../ui/toast.js";
import { openMenu, closeMenu, menuOpen } from "../ui/menu.js";
import { openHelp, openInspect } from "../ui/dialogs.js";
import { lang, t } from "../i18n.js";
import { setText } from "../dom.js";
import { createStory } from "./story.js";

const data = JSON.parse(document.getElementById("replay-data").textContent);
const RID = encodeURIComponent(String(data.run));
// a run saved from analytics or a counterexample may have no title: its scenario's name is one
data.title = data.title || data.scenario_name || t("run {id}", { id: data.run });
document.title = t("{title} — ISR Lab replay", { title: data.title });
const store = createStore();

// -- links, fork, save -----------------------------------------------------------------------------
function focusArgs() {
  const hl = store.ui.highlight;
  const p = hl && hl.partitions.size ? hl.partitions.values().next().value : null;
  return { t_ms: R.t, partition: p, broker: store.ui.selectedBroker };
}

async function shareLink() {
  const f = focusArgs();
  let url;
  if (data.saved) {
    const reply = await postJSON("/api/links", { run: data.run, ...f, lang: lang() });
    if (!reply.ok) { toast(t("Cannot make a link"), errorText(reply.error), "error"); return; }
    url = location.origin + reply.url;
  } else {
    const q = new URLSearchParams({ t: String(f.t_ms) });
    if (f.partition) q.set("p", f.partition);
    if (f.broker !== null && f.broker !== undefined) q.set("b", String(f.broker));
    q.set("lang", lang());          // the link opens in the sharer's language
    url = `${location.origin}/l/${data.code}?${q}`;
  }
  R.lastLink = url;
  document.getElementById("replay-bar").dataset.link = url;
  // the link is always shown (a clipboard may be refused); copied too where the page may
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(url).then(() => toast(t("Link copied"), url, "info", 12000), () => toast(t("Link to this moment"), url, "info", 12000));
  } else toast(t("Link to this moment"), url, "info", 12000);
  return url;
}

async function fork(options = {}) {
  R.playing = false;
  const body = { t_ms: R.t, keep_timeline: options.keep !== false };
  if (options.kafka_version) body.kafka_version = options.kafka_version;
  const forking = t("Forking");
  const from = options.kafka_version ? t("continuing live from {t} under kafka_version {v}…", { t: seconds(R.t), v: options.kafka_version })
    : t("continuing live from {t}…", { t: seconds(R.t) });
  toast(forking, from);
  const reply = await followJob(await postJSON(`/api/replay/${RID}/fork`, body), forking);
  if (!reply.ok) { toast(t("Cannot fork"), errorText(reply.error), "error", 9000); return null; }
  location.href = reply.url;
  return reply;
}

function forkMenu(anchor) {
  const items = [
    { id: "fork-keep", label: t("Continue live from {t} (the rest of the timeline still happens)", { t: seconds(R.t) }), run: () => fork({ keep: true }) },
    { id: "fork-drop", label: t("Continue live from {t} without the rest of the timeline", { t: seconds(R.t) }), run: () => fork({ keep: false }) },
    "-",
    ...R.versions.filter(v => v !== data.kafka_version).map(v => ({ id: `fork-era-${v}`,
      label: t("Re-run to {t} under kafka_version {v}{note}, then continue live", { t: seconds(R.t), v, note: R.notes[v] ? ` (${R.notes[v].short})` : "" }),
      run: () => fork({ keep: true, kafka_version: v }) })),
  ];
  openMenu(t("Fork this run"), items, anchor);
}

async function saveScenarioRun() {
  const reply = await followJob(await postJSON("/api/runs", { scenario: await scenarioOfLink() }), t("Saving the run"));
  if (!reply.ok) { toast(t("Cannot save"), errorText(reply.error), "error"); return; }
  location.href = reply.links.page + `?t=${R.t}`;
}

async function scenarioOfLink() {
  const reply = await getJSON(`/api/links/${data.code}`);
  return reply.scenario;
}

// -- the app object the shared renderers talk to: read-only answers -------------------------------
const READ_ONLY = t("This is a replay: fork it (Fork button) to act on the cluster from this moment.");
const app = {
  store, toast, data,
  async request(event, payload) {
    if (event === "inspect") {
      const p = new URLSearchParams({ partition: payload.partition, cursor: R.cursor || "" });
      return getJSON(`/api/replay/${RID}/inspect?${p}`);
    }
    return { ok: false, error: { message: READ_ONLY } };
  },
  /** The time chart's whole-run series of one partition (one re-simulation on the server). */
  fetchSeries: key => getJSON(`/api/replay/${RID}/series?partition=${encodeURIComponent(key)}`).then(reply => settleJob(reply)),
  /** Kafka's metrics over the whole run (one re-simulation on the server): the Metrics tab. */
  fetchMetrics: () => getJSON(`/api/replay/${RID}/metrics`).then(reply => settleJob(reply)),
  async control(action) {
    if (action === "play") { cursor.play(); return true; }
    if (action === "pause") { cursor.pause(); return true; }
    if (action === "step") { await story.step(1); return true; }
    if (action === "restart") { await cursor.jump({ t: 0 }); return true; }
    if (action === "pause_on_violation") return true;
    toast(t("Not in a replay"), READ_ONLY);
    return false;
  },
  async command() { toast(t("Read-only replay"), READ_ONLY, "info", 6000); return false; },
  setSpeed(v) { cursor.setSpeed(v === "max" ? 300 : v); return Promise.resolve(true); },
  nudgeSpeed(dir) {
    let i = SPEEDS.findIndex(s => s >= R.speed);
    if (i < 0) i = SPEEDS.length - 1;
    cursor.setSpeed(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, i + dir))]);
    return Promise.resolve(true);
  },
  async load() { location.href = "/"; return false; },
  async reconfigure(payload) {
    if (payload && payload.kafka_version && payload.kafka_version !== data.kafka_version) {
      await fork({ keep: true, kafka_version: payload.kafka_version });
      return true;
    }
    app.requestRender(true);
    return false;
  },
  openPicker() { location.href = "/runs"; },
  openConfig() { toast(t("Read-only replay"), t("Fork under another era from the Fork menu, or change the config in a fork.")); },
  openHelp: () => openHelp(app),
  share: () => shareLink(),
  brokerMenu(id, anchor) {
    if (!store.brokers.has(id)) return;
    store.ui.selectedBroker = id;
    app.requestRender(true);
    const b = store.brokers.get(id);
    const title = b.controller ? t("Broker {id} · {state} · controller (replay)", { id, state: b.state }) : t("Broker {id} · {state} (replay)", { id, state: b.state });
    openMenu(title, [
      { id: "fork", label: t("Fork from {t} to act on broker {id}…", { t: seconds(R.t), id }), run: () => forkMenu(anchor) },
      { id: "link", label: t("Copy a link to this moment with this broker selected"), run: () => shareLink() },
    ], anchor);
  },
  zoneMenu(rack, anchor) {
    openMenu(t("Zone {rack} (replay)", { rack }), [
      { id: "fork", label: t("Fork from {t} to fail, isolate, restart or heal zone {rack}…", { t: seconds(R.t), rack }), run: () => forkMenu(anchor) },
      { id: "link", label: t("Copy a link to this moment"), run: () => shareLink() },
    ], anchor);
  },
  zoneAction(rack) { app.zoneMenu(rack, document.querySelector(`.zone[data-rack="${CSS.escape(rack)}"] .zhead`)); },
  partitionMenu(key, anchor) {
    if (!store.partitions.has(key)) return;
    view.highlightPartition(key);
    openMenu(t("{key} (replay)", { key }), [
      { id: "inspect", label: t("Inspect the logs (record by record)…"), run: () => openInspect(app, key) },
      { id: "link", label: t("Copy a link to this moment with this partition highlighted"), run: () => shareLink() },
    ], anchor);
  },
  selectEvent(e, reveal = true) {
    view.selectEvent(e, reveal);
    if (typeof e.i === "number" && e.i >= 0 && e.i !== R.historyLen - 1) cursor.jump({ event: e.i });
  },
  jumpToViolation() {
    const v = R.violations.length ? R.violations[R.violations.length - 1] : null;
    if (!v) return;
    const [at, , topic, partition] = v;
    cursor.jump({ t: at }).then(() => view.highlightPartition(topic !== null ? `${topic}-${partition}` : null));
  },
};
window.isrlab = app;

// the download link names what this replay is made of, not the live room the top bar assumes
const view = createView(app, { afterRender() {
  const dl = document.getElementById("download-link");
  if (!dl) return;
  dl.href = data.saved ? `/api/runs/${RID}/export` : `/api/links/${data.code}`;
  dl.title = data.saved ? t("This run as a JSON file (import it on any server)") : t("The scenario this link carries (JSON)");
  setText(dl, data.saved ? t("Export run") : t("Scenario JSON"));
} });
// The replay's own chrome (its bar and the narration strip) tells the story of the moment shown:
// the scenario's guide starts folded ("show" opens it) and the live page's violation bar, which
// would repeat the narration over the partitions, is left out (docs: issue 34, the replay chrome).
document.body.classList.add("replay");
const storyEl = document.getElementById("story"), storyToggle = document.getElementById("story-toggle");
if (storyEl && storyToggle) { storyEl.classList.add("collapsed"); storyToggle.textContent = t("show"); }
const cursor = createCursor(RID, data.end_ms, view, () => bar.render());
const R = Object.assign(cursor.R, { story: [], violations: [], versions: [], notes: {} });
const story = createStory(R, store, cursor, view);
const stepForward = () => story.step(1), stepBack = () => story.step(-1);
Object.assign(app, { replay: R, seek: cursor.seek, stepForward, stepBack,
  play: cursor.play, pause: cursor.pause, fork, shareLink });
const bar = createBar(data, cursor, { forkMenu, shareLink, saveScenarioRun, step: story.step,
  narration: story.strip, narrate: story.narrate });

function onKey(e) {
  if (!pageKey(e, { rangeIsField: false })) return;
  if (menuOpen() && e.key !== "Escape") return;
  const keys = { " ": () => (R.playing ? cursor.pause() : cursor.play()), n: stepForward, ".": stepForward, ArrowRight: stepForward,
    b: stepBack, ",": stepBack, ArrowLeft: stepBack, Home: () => cursor.seek(0), End: () => cursor.seek(R.end),
    "?": () => openHelp(app), Escape: () => app.clearSelection(), v: () => app.jumpToViolation(),
    "+": () => app.nudgeSpeed(1), "-": () => app.nudgeSpeed(-1) };
  if (/^[0-9]$/.test(e.key)) { e.preventDefault(); app.selectBroker(Number(e.key)); return; }
  const fn = keys[e.key];
  if (!fn) return;
  e.preventDefault();
  closeMenu();
  fn();
}

// -- embedded in the compare page: the parent drives the time axis --------------------------------
if (data.embed) {
  document.body.classList.add("embedded");
  window.addEventListener("message", e => {
    if (e.origin !== location.origin || !e.data || e.data.isrlab !== "compare") return;
    if (e.data.t !== undefined) cursor.jump({ t: e.data.t });
    if (e.data.highlight) view.highlightPartition(e.data.highlight);
  });
  setInterval(() => window.parent.postMessage({ isrlab: "replay", run: data.run, t: R.t, seq: store.seq }, location.origin), 250);
}

// Before its first frame the server may re-simulate the whole run (seconds for a long one, a
// sweep's run among them): the page says what it opens and that it is being prepared, with the
// time waited so far, instead of a page that says "connecting…" with no title.
function showPreparing() {
  setText(document.getElementById("scenario-name"), data.title);
  const text = document.getElementById("story-text");
  const started = performance.now();
  const tick = () => {
    if (store.meta || document.body.dataset.ready) { clearInterval(timer); delete document.body.dataset.preparing; return; }
    const waited = Math.round((performance.now() - started) / 1000);
    setText(text, t("Preparing the replay: re-simulating this run on the server… {s} s", { s: waited }));
  };
  document.body.dataset.preparing = "1";
  const timer = setInterval(tick, 1000);
  tick();
}
showPreparing();

document.addEventListener("keydown", onKey);
setText(document.getElementById("conn"), t("replay"));
document.getElementById("conn").className = "conn ok";
view.start().then(eras => { R.versions = eras.versions; R.notes = eras.notes || {}; });
// An old run re-simulates under its own engine's rules (docs/model.md §19): only a version this
// server cannot reproduce exactly is worth a warning (engine_note says what it does instead).
if (data.engine_note) {
  toast(t("Engine version differs"), data.engine_note, "error", 12000);
} else if (data.engine_version && data.engine_version !== data.server_engine_version) {
  toast(t("Old engine"), t("made with engine {v}; replayed with its rules on engine {server}", { v: data.engine_version, server: data.server_engine_version }), "info", 6000);
}
const timeline = getJSON(`/api/replay/${RID}/timeline`).then(reply => {
  if (!reply.ok) return;
  R.story = reply.story;
  R.violations = reply.violations;
  bar.drawMarks(R.story, R.violations);
});

// A link's moment, else the run's first violation (the reason it was saved, usually), else 0 s.
const focus = { ...(data.focus || {}) };
// Embedded in the compare page, the parent drives the time axis: no jump of our own.
const hasMoment = (focus.t_ms !== null && focus.t_ms !== undefined) || data.embed;
(hasMoment ? Promise.resolve() : timeline).then(() => {
  const first = hasMoment ? null : story.firstViolation();
  if (first) {
    focus.t_ms = first[0];
    if (!focus.partition && first[2] !== null && first[2] !== undefined) focus.partition = `${first[2]}-${first[3]}`;
  }
  return cursor.move({ t: focus.t_ms === null || focus.t_ms === undefined ? 0 : focus.t_ms });
}).then(() => {
  if (focus.partition) view.highlightPartition(focus.partition, true);
  if (focus.broker !== null && focus.broker !== undefined) store.ui.selectedBroker = focus.broker;
  app.requestRender(true);
  story.narrate();
  document.body.dataset.ready = "1";
});
bar.render();

// Replay of a saved run (or of a scenario link) in the live page's own view. The page's
// renderers and store are the live simulator's; what differs is where frames come from: HTTP
// requests that move this viewer's cursor on the server (seek to t, one event forward or back,
// play = small moves forward), answered with frames in the live format. Acting on the cluster
// is not possible in a replay: "Fork" continues live from the moment shown.
import { followJob } from "../jobs.js";
import { createStore, applyFrame, takeChanges, touched, emptyHighlight } from "../store.js";
import { ACTIONS, runAction, isEnabled, labelOf, keyLabel } from "../actions.js";
import { errorText, seconds, speed as fmtSpeed } from "../format.js";
import { createTopbar } from "../render/topbar.js";
import { createMap } from "../render/map.js";
import { createPartitions } from "../render/partitions.js";
import { createTimeline } from "../render/timeline.js";
import { createZk } from "../render/zk.js";
import { createClients } from "../render/clients.js";
import { createNetwork } from "../render/network.js";
import { createCli } from "../render/cli.js";
import { createAlarms } from "../render/alarms.js";
import { toast } from "../ui/toast.js";
import { openMenu, closeMenu, menuOpen } from "../ui/menu.js";
import { openHelp, openInspect, loadEras } from "../ui/dialogs.js";
import { h, setText, $$ } from "../dom.js";

const data = JSON.parse(document.getElementById("replay-data").textContent);
const RID = encodeURIComponent(String(data.run));
const SPEEDS = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 300];
const store = createStore();
let forceNext = true;

// -- the replay's own state ----------------------------------------------------------------------
const R = {
  cursor: null, t: 0, end: data.end_ms, historyLen: 0, playing: false, speed: 1,
  busy: false, queued: null, requests: 0, lastMs: 0, story: [], violations: [], versions: [],
};

async function getJSON(url, init) {
  const res = await fetch(url, init);
  try { return await res.json(); } catch (e) { return { ok: false, error: { message: `${res.status} ${res.statusText}` } }; }
}

/** Move the cursor ({t} | {event} | {step}) and apply the frame that comes back. Requests are
 *  serialised; while one is under way only the latest wish is kept (a scrub sends few). */
function move(where) {
  if (R.busy) { R.queued = where; return R.pending; }
  R.busy = true;
  R.pending = (async () => {
    let next = where;
    while (next) {
      R.queued = null;
      await fetchFrame(next);
      next = R.queued;
    }
    R.busy = false;
  })();
  return R.pending;
}

async function fetchFrame(where) {
  const p = new URLSearchParams();
  if (where.t !== undefined) p.set("t", String(Math.max(0, Math.min(R.end, Math.round(where.t)))));
  if (where.event !== undefined) p.set("event", String(where.event));
  if (where.step) p.set("step", where.step);
  if (R.cursor) p.set("cursor", R.cursor);
  p.set("base", String(store.seq || 0));
  if (R.playing) p.set("playing", "1");
  const started = performance.now();
  const reply = await getJSON(`/api/replay/${RID}/frame?${p}`);
  R.lastMs = performance.now() - started;
  R.requests += 1;
  if (!reply.ok) {
    R.playing = false;
    toast("Cannot show that moment", errorText(reply.error), "error");
    return;
  }
  R.cursor = reply.cursor;
  R.t = reply.t_ms;
  R.historyLen = reply.history_len;
  if (applyFrame(store, reply.frame, performance.now()) === "gap") {
    store.seq = 0;                                  // ask for a full frame next time
  }
  if (reply.frame.full) forceNext = true;
  if (R.t >= R.end && R.playing) R.playing = false;
  renderBar();
}

const seek = t => move({ t });
const stepForward = () => { R.playing = false; return move({ step: "forward" }); };
const stepBack = () => { R.playing = false; return move({ step: "back" }); };

// -- playing ---------------------------------------------------------------------------------------
let playClock = null;
function play() {
  if (R.t >= R.end) return;
  R.playing = true;
  playClock = { wall: performance.now(), sim: R.t };
  renderBar();
  tickPlay();
}
function pause() { R.playing = false; renderBar(); move({ t: R.t }); }
async function tickPlay() {
  while (R.playing) {
    const now = performance.now();
    const target = playClock.sim + (now - playClock.wall) * R.speed;
    await move({ t: Math.min(R.end, target) });
    if (R.t >= R.end) { R.playing = false; renderBar(); break; }
    await new Promise(r => setTimeout(r, 60));
  }
}
function setSpeed(value) {
  R.speed = Number(value) || 1;
  if (R.playing) playClock = { wall: performance.now(), sim: R.t };
  renderBar();
}

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
    const reply = await getJSON("/api/links", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ run: data.run, ...f }) });
    if (!reply.ok) { toast("Cannot make a link", errorText(reply.error), "error"); return; }
    url = location.origin + reply.url;
  } else {
    const q = new URLSearchParams({ t: String(f.t_ms) });
    if (f.partition) q.set("p", f.partition);
    if (f.broker !== null && f.broker !== undefined) q.set("b", String(f.broker));
    url = `${location.origin}/l/${data.code}?${q}`;
  }
  R.lastLink = url;
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(() => toast("Link copied", url));
  else toast("Link to this moment", url, "info", 12000);
  return url;
}

async function fork(options = {}) {
  R.playing = false;
  const body = { t_ms: R.t, keep_timeline: options.keep !== false };
  if (options.kafka_version) body.kafka_version = options.kafka_version;
  toast("Forking", `continuing live from ${seconds(R.t)}${options.kafka_version ? " under kafka_version " + options.kafka_version : ""}…`);
  const reply = await followJob(await getJSON(`/api/replay/${RID}/fork`, { method: "POST",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }), "Forking");
  if (!reply.ok) { toast("Cannot fork", errorText(reply.error), "error", 9000); return null; }
  location.href = reply.url;
  return reply;
}

function forkMenu(anchor) {
  const items = [
    { id: "fork-keep", label: `Continue live from ${seconds(R.t)} (the rest of the timeline still happens)`, run: () => fork({ keep: true }) },
    { id: "fork-drop", label: `Continue live from ${seconds(R.t)} without the rest of the timeline`, run: () => fork({ keep: false }) },
    "-",
    ...R.versions.filter(v => v !== data.kafka_version).map(v => ({ id: `fork-era-${v}`,
      label: `Re-run to ${seconds(R.t)} under kafka_version ${v}, then continue live`, run: () => fork({ keep: true, kafka_version: v }) })),
  ];
  openMenu("Fork this run", items, anchor);
}

async function saveScenarioRun() {
  const reply = await followJob(await getJSON("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ scenario: await scenarioOfLink() }) }), "Saving the run");
  if (!reply.ok) { toast("Cannot save", errorText(reply.error), "error"); return; }
  location.href = reply.links.page + `?t=${R.t}`;
}

async function scenarioOfLink() {
  const reply = await getJSON(`/api/links/${data.code}`);
  return reply.scenario;
}

// -- the app object the live renderers talk to ------------------------------------------------------
const READ_ONLY = "This is a replay: fork it (Fork button) to act on the cluster from this moment.";
const app = {
  store, toast, replay: R, data,
  requestRender(force) { if (force) forceNext = true; store.dirty = true; },
  async request(event, payload) {
    if (event === "inspect") {
      const p = new URLSearchParams({ partition: payload.partition, cursor: R.cursor || "" });
      return getJSON(`/api/replay/${RID}/inspect?${p}`);
    }
    return { ok: false, error: { message: READ_ONLY } };
  },
  async control(action) {
    if (action === "play") { play(); return true; }
    if (action === "pause") { pause(); return true; }
    if (action === "step") { await stepForward(); return true; }
    if (action === "restart") { R.playing = false; await seek(0); return true; }
    if (action === "pause_on_violation") return true;
    toast("Not in a replay", READ_ONLY);
    return false;
  },
  async command() { toast("Read-only replay", READ_ONLY, "info", 6000); return false; },
  setSpeed(v) { setSpeed(v === "max" ? 300 : v); return Promise.resolve(true); },
  nudgeSpeed(dir) {
    let i = SPEEDS.findIndex(s => s >= R.speed);
    if (i < 0) i = SPEEDS.length - 1;
    setSpeed(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, i + dir))]);
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
  openConfig() { toast("Read-only replay", "Fork under another era from the Fork menu, or change the config in a fork."); },
  openHelp: () => openHelp(app),
  share: () => shareLink(),
  showTab(name) {
    store.ui.tab = name;
    for (const b of $$(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
    for (const p of $$(".tab-panel")) p.classList.toggle("active", p.dataset.panel === name);
    renderTab(name, { changed: new Set(), zk: new Map(), flags: { events: true, records: true, meta: true, reset: false, violations: false } }, true);
  },
  selectBroker(id) {
    store.ui.selectedBroker = store.brokers.has(id) ? id : null;
    app.requestRender(true);
  },
  brokerMenu(id, anchor) {
    if (!store.brokers.has(id)) return;
    store.ui.selectedBroker = id;
    app.requestRender(true);
    const b = store.brokers.get(id);
    openMenu(`Broker ${id} · ${b.state}${b.controller ? " · controller" : ""} (replay)`, [
      { id: "fork", label: `Fork from ${seconds(R.t)} to act on broker ${id}…`, run: () => forkMenu(anchor) },
      { id: "link", label: "Copy a link to this moment with this broker selected", run: () => shareLink() },
    ], anchor);
  },
  partitionMenu(key, anchor) {
    if (!store.partitions.has(key)) return;
    const hl = emptyHighlight();
    hl.active = true;
    hl.partitions.add(key);
    store.ui.highlight = hl;
    app.requestRender(true);
    openMenu(key + " (replay)", [
      { id: "inspect", label: "Inspect the logs (record by record)…", run: () => openInspect(app, key) },
      { id: "link", label: "Copy a link to this moment with this partition highlighted", run: () => shareLink() },
    ], anchor);
  },
  selectEvent(e, reveal = true) {
    store.ui.selectedEvent = e.i;
    store.ui.highlight = touched(e);
    app.requestRender(true);
    if (reveal) timeline.reveal(e.i, store);
    if (typeof e.i === "number" && e.i >= 0 && e.i !== R.historyLen - 1) { R.playing = false; move({ event: e.i }); }
  },
  jumpToViolation() {
    const v = R.violations.length ? R.violations[R.violations.length - 1] : null;
    if (!v) return;
    R.playing = false;
    const [t, , topic, partition] = v;
    seek(t).then(() => {
      const hl = emptyHighlight();
      hl.active = true;
      if (topic !== null) hl.partitions.add(`${topic}-${partition}`);
      store.ui.highlight = hl;
      app.requestRender(true);
    });
  },
  clearSelection() {
    store.ui.selectedEvent = null;
    store.ui.selectedBroker = null;
    store.ui.highlight = emptyHighlight();
    closeMenu();
    app.requestRender(true);
    timeline.refreshSelection(store);
  },
  seek, stepForward, stepBack, play, pause, fork, shareLink,
};
window.isrlab = app;

const topbar = createTopbar(app);
const map = createMap(app);
const partitions = createPartitions(app);
const timeline = createTimeline(app);
const zk = createZk(app);
const clients = createClients(app);
const network = createNetwork(app);
const cli = createCli(app);
const alarms = createAlarms(app);
const TABS = { timeline, zk, clients, network, cli };

function renderTab(name, changes, force) {
  const r = TABS[name];
  if (r) r.render(store, force ? { ...changes, flags: { ...changes.flags, events: true, records: true, meta: true, reset: true } } : changes, force);
}

function renderAll(changes, force) {
  if (force) { changes.flags.meta = true; changes.flags.highlight = true; }
  topbar.render(store, changes);
  map.render(store, changes);
  partitions.render(store, changes, force, 1);
  alarms.render(store, changes);
  renderTab(store.ui.tab, changes, force && changes.flags.reset);
  if (store.ui.tab !== "timeline") timeline.render(store, changes);
  const dl = document.getElementById("download-link");
  if (dl) {
    dl.href = data.saved ? `/api/runs/${RID}/export` : `/api/links/${data.code}`;
    dl.title = data.saved ? "This run as a JSON file (import it on any server)" : "The scenario this link carries (JSON)";
    setText(dl, data.saved ? "Export run" : "Scenario JSON");
  }
}

function loop(now) {
  if (store.dirty || forceNext) {
    const changes = takeChanges(store);
    const force = forceNext;
    forceNext = false;
    try { renderAll(changes, force); } catch (e) { console.error(e); }
  }
  try { map.animate(store, now); } catch (e) { console.error(e); }
  requestAnimationFrame(loop);
}

// -- the replay bar: scrubber, steps, play, speed, fork, link --------------------------------------
const bar = document.getElementById("replay-bar");
const scrub = h("input", { type: "range", min: "0", max: String(data.end_ms), step: "1", value: "0", id: "replay-scrub",
  "aria-label": "moment of the run", oninput: e => { R.playing = false; seek(Number(e.target.value)); } });
const marks = h("div.replay-marks", { id: "replay-marks" });
const timeLabel = h("span.mono", { id: "replay-time" });
const playBtn = h("button", { type: "button", id: "replay-play", title: "Play / pause (Space)", onclick: () => (R.playing ? pause() : play()) });
const speedSel = h("select", { id: "replay-speed", "aria-label": "replay speed", onchange: e => setSpeed(e.target.value) },
  ...SPEEDS.map(s => h("option", { value: String(s), text: fmtSpeed(s) })));
speedSel.value = "1";
const status = h("span.dim.small", { id: "replay-status" });
bar.append(
  h("span.replay-badge", { text: data.saved ? "REPLAY" : "LINK", title: data.saved ? "a saved run" : "a run from a scenario link (not saved)" }),
  h("span.replay-title", { id: "replay-title", text: data.title }),
  h("button", { type: "button", id: "replay-start", title: "Start (Home)", text: "|◀", onclick: () => { R.playing = false; seek(0); } }),
  h("button", { type: "button", id: "replay-back", title: "One event back (b, ←)", text: "◀ step", onclick: stepBack }),
  playBtn,
  h("button", { type: "button", id: "replay-forward", title: "One event forward (n, →)", text: "step ▶", onclick: stepForward }),
  h("button", { type: "button", id: "replay-end", title: "End (End)", text: "▶▶|", onclick: () => { R.playing = false; seek(R.end); } }),
  speedSel,
  h("div.replay-track", null, marks, scrub),
  timeLabel,
  h("button", { type: "button", id: "replay-fork", class: "primary", text: "Fork…", title: "Continue live from this moment (with other actions, or under another era)",
    onclick: e => forkMenu(e.currentTarget) }),
  h("button", { type: "button", id: "replay-link", text: "Link", title: "Copy a link to this moment (with the selected partition/broker)", onclick: () => shareLink() }),
  data.saved ? h("a.button.ghost", { id: "replay-compare", href: `/compare?a=${RID}`, text: "Compare…" })
    : h("button", { type: "button", id: "replay-save", text: "Save", title: "Save this run in the runs list", onclick: saveScenarioRun }),
  h("a.button.ghost", { href: "/runs", text: "Runs" }),
  status);

function renderBar() {
  if (document.activeElement !== scrub) scrub.value = String(R.t);
  setText(timeLabel, `${seconds(R.t)} / ${seconds(R.end)}`);
  setText(playBtn, R.playing ? "❚❚ pause" : "▶ play");
  setText(status, R.requests === 0 ? "preparing the replay (its first opening re-simulates the run once)…"
    : `event ${R.historyLen}` + (R.lastMs ? ` · ${R.lastMs.toFixed(0)} ms` : ""));
  bar.dataset.t = String(R.t);
  bar.dataset.playing = R.playing ? "1" : "0";
}

function drawMarks() {
  const frag = [];
  const end = Math.max(1, R.end);
  const pick = R.story.filter(([, , type]) => type === "leader_elected" || type === "isr_shrink" || type === "truncation"
    || type === "broker_stopped" || type === "fault" || type === "partition_offline");
  for (const [i, t, type] of pick.slice(-400)) {
    const m = h("span.mark." + type, { title: `${type} at ${seconds(t)}`, dataset: { i: String(i) },
      onclick: () => { R.playing = false; move({ event: i }); } });
    m.style.left = (100 * t / end).toFixed(3) + "%";
    frag.push(m);
  }
  for (const [t, inv] of R.violations) {
    const m = h("span.mark.violation", { title: `${inv} at ${seconds(t)}`, onclick: () => { R.playing = false; seek(t); } });
    m.style.left = (100 * t / end).toFixed(3) + "%";
    frag.push(m);
  }
  marks.replaceChildren(...frag);
}

function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.tagName === "INPUT" && t.type !== "range" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
  if (document.querySelector("dialog[open]")) return;
  if (menuOpen() && e.key !== "Escape") return;
  const keys = { " ": () => (R.playing ? pause() : play()), n: stepForward, ".": stepForward, ArrowRight: stepForward,
    b: stepBack, ",": stepBack, ArrowLeft: stepBack, Home: () => seek(0), End: () => seek(R.end),
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
    if (e.data.t !== undefined) { R.playing = false; seek(e.data.t); }
    if (e.data.highlight) {
      const hl = emptyHighlight();
      hl.active = true;
      hl.partitions.add(e.data.highlight);
      store.ui.highlight = hl;
      app.requestRender(true);
    }
  });
  setInterval(() => window.parent.postMessage({ isrlab: "replay", run: data.run, t: R.t, seq: store.seq }, location.origin), 250);
}

for (const b of $$(".tabs button")) b.addEventListener("click", () => app.showTab(b.dataset.tab));
for (const el of $$("[data-action]")) {
  if (el.closest("#toolbar")) continue;
  el.addEventListener("click", () => { const a = ACTIONS.find(x => x.id === el.dataset.action); if (a) runAction(a, { app, store }); });
}
document.addEventListener("keydown", onKey);
setText(document.getElementById("conn"), "replay");
document.getElementById("conn").className = "conn ok";
loadEras().then(e => { R.versions = e.versions; topbar.setVersions(e.versions); app.requestRender(true); });
if (data.engine_version && data.engine_version !== data.server_engine_version) {
  toast("Engine version differs", `made with engine ${data.engine_version}; this server runs ${data.server_engine_version}: the replay may differ`, "error", 12000);
}
getJSON(`/api/replay/${RID}/timeline`).then(reply => {
  if (!reply.ok) return;
  R.story = reply.story;
  R.violations = reply.violations;
  drawMarks();
});

const focus = data.focus || {};
move({ t: focus.t_ms === null || focus.t_ms === undefined ? 0 : focus.t_ms }).then(() => {
  if (focus.partition) {
    const hl = emptyHighlight();
    hl.active = true;
    hl.partitions.add(focus.partition);
    store.ui.highlight = hl;
    requestAnimationFrame(() => partitions.scrollTo(focus.partition));
  }
  if (focus.broker !== null && focus.broker !== undefined) store.ui.selectedBroker = focus.broker;
  app.requestRender(true);
  document.body.dataset.ready = "1";
});
renderBar();
requestAnimationFrame(loop);

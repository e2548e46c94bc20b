// ISR Lab's page: state -> layout -> render. Frames from the socket update the store; one
// requestAnimationFrame loop redraws what changed and animates messages and countdowns.
import { connectSocket } from "./socket.js";
import { createStore, applyFrame, takeChanges, touched, emptyHighlight } from "./store.js";
import { ACTIONS, BY_ID, actionForKey, runAction, isEnabled, labelOf, keyLabel } from "./actions.js";
import { errorText, seconds } from "./format.js";
import { createTopbar } from "./render/topbar.js";
import { createMap } from "./render/map.js";
import { createPartitions } from "./render/partitions.js";
import { createTimeline } from "./render/timeline.js";
import { createZk } from "./render/zk.js";
import { createClients } from "./render/clients.js";
import { createNetwork } from "./render/network.js";
import { createCli } from "./render/cli.js";
import { createAlarms } from "./render/alarms.js";
import { toast } from "./ui/toast.js";
import { openMenu, closeMenu, menuOpen } from "./ui/menu.js";
import { openPicker, openConfig, openHelp, openInspect, loadEras } from "./ui/dialogs.js";
import { $$ } from "./dom.js";

const store = createStore();
const SPEEDS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, "max"];
let forceNext = true;
let resyncing = false;
let conn = null;
let wanted = null;   // the speed last asked for

const app = {
  store,
  toast,
  requestRender(force) { if (force) forceNext = true; store.dirty = true; },
  request: (event, payload, timeout) => conn.request(event, payload, timeout),

  async control(action, value) {
    const payload = value === undefined ? { action } : { action, value };
    const reply = await conn.request("control", payload);
    if (!reply.ok) toast(`Cannot ${action}`, errorText(reply.error), "error");
    else if (action === "step") {
      const evs = reply.events || [];
      if (evs.length) app.selectEvent(evs[evs.length - 1], false);
    }
    return reply.ok;
  },

  /** Send one command (or several in order); errors come back as a toast, never as a crash. */
  async command(op, label) {
    const ops = Array.isArray(op) ? op : [op];
    let last = null;
    for (const o of ops) {
      const reply = await conn.request("command", o);
      if (!reply.ok) { toast(`Rejected: ${label || o.op}`, errorText(reply.error), "error"); return false; }
      last = reply.command;
    }
    toast(label || ops[0].op, last ? `scheduled at ${seconds(last.at_ms)} simulated` : "");
    return true;
  },

  setSpeed(value) {
    wanted = { speed: value, at: performance.now() };
    return app.control("speed", value);
  },
  nudgeSpeed(dir) {
    // quick key presses build on the speed just asked for, not on the last frame's
    const recent = wanted && performance.now() - wanted.at < 1500;
    const cur = recent ? wanted.speed : store.clock ? store.clock.speed : 1;
    let i = SPEEDS.findIndex(s => s === cur || (typeof s === "number" && typeof cur === "number" && s >= cur));
    if (i < 0) i = SPEEDS.length - 1;
    if (cur !== SPEEDS[i] && dir < 0) i += 1;
    const next = SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, i + dir))];
    return app.setSpeed(next);
  },

  /** Load a library scenario or a document into this room; returns the reply when `quiet`. */
  async load(source, quiet = false) {
    const reply = await conn.request("load", source);
    if (!reply.ok && !quiet) toast("Cannot load the scenario", errorText(reply.error), "error");
    if (reply.ok) toast("Loaded", reply.room.name);
    return quiet ? reply : reply.ok;
  },

  async reconfigure(payload) {
    const reply = await conn.request("reconfigure", payload);
    if (!reply.ok) { toast("Cannot restart with that", errorText(reply.error), "error"); app.requestRender(true); return false; }
    return true;
  },

  openPicker: tab => openPicker(app, tab),
  openConfig: () => openConfig(app),
  openHelp: () => openHelp(app),

  share() {
    const url = location.href;
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(() => toast("Link copied", url));
    else toast("Link to this room", url, "info", 9000);
  },

  showTab(name) {
    store.ui.tab = name;
    for (const b of $$(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
    for (const p of $$(".tab-panel")) p.classList.toggle("active", p.dataset.panel === name);
    renderTab(name, { changed: new Set(), zk: new Map(), flags: { events: true, records: true, meta: true, reset: false, violations: false } }, true);
    if (name === "timeline" && store.ui.selectedEvent !== null) timeline.reveal(store.ui.selectedEvent, store);
  },

  selectBroker(id) {
    store.ui.selectedBroker = store.brokers.has(id) ? id : null;
    app.requestRender(true);
  },

  brokerMenu(id, anchor) {
    const b = store.brokers.get(id);
    if (!b) return;
    store.ui.selectedBroker = id;
    app.requestRender(true);
    const items = ACTIONS.filter(a => a.group === "broker").map(a => ({ id: a.id, label: labelOf(a, store, b), key: keyLabel(a),
      enabled: isEnabled(a, store, b), run: () => runAction(a, { app, store, broker: store.brokers.get(id) }) }));
    openMenu(`Broker ${id} · ${b.state}${b.controller ? " · controller" : ""}`, items, anchor);
  },

  partitionMenu(key, anchor) {
    const p = store.partitions.get(key);
    if (!p) return;
    const items = [
      { id: "inspect", label: "Inspect the logs (record by record)…", run: () => openInspect(app, key) },
      { id: "preferred", label: `Preferred replica election (→ broker ${p.replicas[0]})`,
        run: () => app.command({ op: "elect_preferred", topic: p.topic, partition: p.partition }, `preferred election ${key}`) },
      "-",
      { id: "produce-all", label: "Produce 10 records here, acks=all",
        run: () => app.command({ op: "produce", topic: p.topic, partition: p.partition, count: 10, acks: "all", producer: "console" }, `produce 10 to ${key} (acks=all)`) },
      { id: "produce-1", label: "Produce 10 records here, acks=1",
        run: () => app.command({ op: "produce", topic: p.topic, partition: p.partition, count: 10, acks: "1", producer: "console" }, `produce 10 to ${key} (acks=1)`) },
      "-",
      { id: "describe", label: "kafka-topics.sh --describe --topic " + p.topic, run: () => { app.showTab("cli"); cli.exec(`kafka-topics.sh --describe --topic ${p.topic}`); } },
      { id: "state", label: "get its state znode", run: () => { app.showTab("cli"); cli.exec(`get /brokers/topics/${p.topic}/partitions/${p.partition}/state`); } },
    ];
    openMenu(key, items, anchor);
  },

  selectEvent(e, reveal = true) {
    store.ui.selectedEvent = e.i;
    store.ui.highlight = touched(e);
    const first = store.ui.highlight.partitions.values().next().value;
    app.requestRender(true);
    if (first) requestAnimationFrame(() => partitions.scrollTo(first));
    if (reveal) timeline.reveal(e.i, store);
  },

  jumpToViolation() {
    const v = store.violations[store.violations.length - 1];
    if (!v) return;
    app.showTab("timeline");
    const key = `${v.topic}-${v.partition}`;
    const ev = [...store.events].reverse().find(e => e.type === "violation" && e.t_ms === v.t_ms && e.invariant === v.invariant);
    const cause = findCause(store.events, v, key);
    const hl = ev ? touched(ev) : emptyHighlight();
    hl.active = true;
    hl.partitions.add(key);
    for (const r of v.records || []) hl.records.add(r);
    if (cause) { const c = touched(cause); for (const f of ["brokers", "partitions", "paths", "records"]) for (const x of c[f]) hl[f].add(x); }
    store.ui.highlight = hl;
    store.ui.selectedEvent = cause ? cause.i : ev ? ev.i : null;
    app.requestRender(true);
    if (store.ui.selectedEvent !== null) timeline.reveal(store.ui.selectedEvent, store);
    requestAnimationFrame(() => partitions.scrollTo(key));
    toast(`${v.invariant} in ${key}`, cause ? `cause: ${cause.type} at ${seconds(cause.t_ms)} — ${cause.reason}` : v.detail, "error", 9000);
  },

  clearSelection() {
    store.ui.selectedEvent = null;
    store.ui.selectedBroker = null;
    store.ui.highlight = emptyHighlight();
    closeMenu();
    app.requestRender(true);
    timeline.refreshSelection(store);
  },
};
/** The event that most plausibly caused a violation: for lost or diverging records the last
 *  truncation of that partition, else an unclean election, else the last election. */
export function findCause(events, v, key) {
  const before = events.filter(e => e.t_ms <= v.t_ms && `${e.topic}-${e.partition}` === key);
  const last = pred => { for (let i = before.length - 1; i >= 0; i--) if (pred(before[i])) return before[i]; return null; };
  if (["acked_record_lost", "consumer_read_lost_record", "replica_divergence"].includes(v.invariant)) {
    return last(e => e.type === "truncation") || last(e => e.type === "leader_elected" && e.kind === "unclean")
      || last(e => e.type === "leader_elected") || last(e => e.type === "become_leader");
  }
  return last(e => e.type === "leader_elected" || e.type === "isr_shrink" || e.type === "partition_offline");
}

window.isrlab = app;   // for the browser tests and the curious (read-only use)

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

function timed(name, fn) {
  const t0 = performance.now();
  fn();
  perf.parts[name] = (perf.parts[name] || 0) + performance.now() - t0;
}

function renderAll(changes, force) {
  if (force) { changes.flags.meta = true; changes.flags.highlight = true; }
  timed("topbar", () => topbar.render(store, changes));
  timed("map", () => map.render(store, changes));
  timed("partitions", () => partitions.render(store, changes, force, stripEvery));
  timed("alarms", () => alarms.render(store, changes));
  timed("tab", () => renderTab(store.ui.tab, changes, force && changes.flags.reset));
  if (store.ui.tab !== "timeline") timed("timeline", () => timeline.render(store, changes));   // keep the story flowing
}

const perf = { render: 0, animate: 0, parse: 0, renders: 0, frames: 0, parts: {} };
app.perf = perf;

// Frame budget: when frames take longer than ~22 ms (a big cluster on a big screen), the log
// strips are redrawn every 2nd-4th update instead of every one; the rest stays at full rate.
let frameEwma = 16.7, lastFrameAt = 0, stripEvery = 1;
function adapt(now) {
  if (lastFrameAt) frameEwma = 0.9 * frameEwma + 0.1 * Math.min(200, now - lastFrameAt);
  lastFrameAt = now;
  if (frameEwma > 22 && stripEvery < 4) { stripEvery += 1; frameEwma = 18; }
  else if (frameEwma < 17.5 && stripEvery > 1) { stripEvery -= 1; frameEwma = 17; }
  perf.stripEvery = stripEvery;
}

function loop(now) {
  adapt(now);
  const t0 = performance.now();
  if (store.dirty || forceNext) {
    const changes = takeChanges(store);
    const force = forceNext;
    forceNext = false;
    try { renderAll(changes, force); } catch (e) { console.error(e); }
    perf.renders += 1;
  }
  const t1 = performance.now();
  try { map.animate(store, now); } catch (e) { console.error(e); }
  perf.render += t1 - t0;
  perf.animate += performance.now() - t1;
  perf.frames += 1;
  requestAnimationFrame(loop);
}

function onFrame(text) {
  const t0 = performance.now();
  let frame;
  try { frame = JSON.parse(text); } catch (e) { return; }
  store.bytes += text.length;
  store.wallLag = Date.now() - frame.wall_ms;
  const result = applyFrame(store, frame, performance.now());
  if (result === "gap" && !resyncing) {
    resyncing = true;
    conn.request("resync", {}).finally(() => { resyncing = false; });
  }
  if (frame.full) forceNext = true;
  perf.parse += performance.now() - t0;
}

function setConn(ok, text) {
  const el = document.getElementById("conn");
  el.className = "conn " + (ok ? "ok" : "bad");
  el.textContent = text;
}

async function joinOrCreate() {
  const wanted = store.room || document.body.dataset.room || "";
  if (wanted) {
    const reply = await conn.request("join", { room: wanted });
    if (reply.ok) return afterJoin(reply.room);
    toast("That simulation is gone", errorText(reply.error) + " — starting a new one.", "error");
  }
  const reply = await conn.request("create", { library: document.body.dataset.defaultScenario });
  if (reply.ok) afterJoin(reply.room);
  else toast("Cannot start a simulation", errorText(reply.error), "error", 20000);
}

function afterJoin(room) {
  store.room = room.room;
  const path = "/r/" + encodeURIComponent(room.room);
  if (location.pathname !== path) history.replaceState(null, "", path);
}

function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
  if (document.querySelector("dialog[open]")) return;
  if (menuOpen() && e.key !== "Escape" && !/^[a-zA-Z]$/.test(e.key)) return;
  const found = actionForKey(e.key);
  if (!found) return;
  e.preventDefault();
  closeMenu();
  if (found.select !== undefined) {
    if (store.brokers.has(found.select)) { app.selectBroker(found.select); toast(`Broker ${found.select} selected`, "k crash · s start · d shutdown · g pause · z/i isolate · x expire session"); }
    return;
  }
  runAction(found, { app, store });
}

for (const b of $$(".tabs button")) b.addEventListener("click", () => app.showTab(b.dataset.tab));
for (const el of $$("[data-action]")) {
  if (el.closest("#toolbar")) continue;
  el.addEventListener("click", () => { const a = BY_ID[el.dataset.action]; if (a) runAction(a, { app, store }); });
}
document.addEventListener("keydown", onKey);
loadEras().then(e => topbar.setVersions(e.versions)).then(() => app.requestRender(true));

conn = connectSocket({
  onFrame,
  onConnect: () => { setConn(true, "live"); joinOrCreate(); },
  onDisconnect: reason => setConn(false, "reconnecting…" + (reason ? "" : "")),
});
requestAnimationFrame(loop);

// The live page: frames from the room's socket feed the shared view (view.js draws them); this
// module is the transport (join or create a room, resync after a gap) and the controls that act
// on the live cluster (commands, speed, broker and partition menus, keys).
import { connectSocket } from "./socket.js";
import { createStore, touched, emptyHighlight } from "./store.js";
import { ACTIONS, actionForKey, runAction, isEnabled, labelOf, keyLabel, inMode, voterOf } from "./actions.js";
import { errorText, seconds } from "./format.js";
import { getJSON } from "./http.js";
import { createView, pageKey } from "./view.js";
import { toast } from "./ui/toast.js";
import { reason } from "./i18n_reasons.js";
import { storyName } from "./i18n_story.js";
import { openMenu, closeMenu, menuOpen } from "./ui/menu.js";
import { openPicker, openConfig, openHelp, openInspect } from "./ui/dialogs.js";
import { rackOf, zoneOf, zoneState } from "./zones.js";
import { t, withLang } from "./i18n.js";

const store = createStore();
const SPEEDS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, "max"];
let resyncing = false;
let conn = null;
let wanted = null;   // the speed last asked for

const app = {
  store,
  toast,
  request: (event, payload, timeout) => conn.request(event, payload, timeout),
  /** The room's bounded series of one partition since the run started (the time chart's past). */
  fetchRoomSeries: key => (store.room ? getJSON(`/api/rooms/${encodeURIComponent(store.room)}/series?partition=${encodeURIComponent(key)}`)
    : Promise.resolve(null)),
  /** The room's Kafka metrics since the run started (the Metrics tab's past). */
  fetchRoomMetrics: () => (store.room ? getJSON(`/api/rooms/${encodeURIComponent(store.room)}/metrics`) : Promise.resolve(null)),

  async control(action, value) {
    const payload = value === undefined ? { action } : { action, value };
    const reply = await conn.request("control", payload);
    if (!reply.ok) toast(t("Cannot {action}", { action }), errorText(reply.error), "error");
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
      if (!reply.ok) { toast(t("Rejected: {what}", { what: label || o.op }), errorText(reply.error), "error"); return false; }
      last = reply.command;
    }
    toast(label || ops[0].op, last ? t("scheduled at {t} simulated", { t: seconds(last.at_ms) }) : "");
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
    app.loads = (app.loads || 0) + 1;          // the picker resumes a held run only if nothing was loaded
    const reply = await conn.request("load", source);
    if (!reply.ok && !quiet) toast(t("Cannot load the scenario"), errorText(reply.error), "error");
    if (reply.ok) toast(t("Loaded"), storyName(reply.room.name));
    return quiet ? reply : reply.ok;
  },

  async reconfigure(payload) {
    const reply = await conn.request("reconfigure", payload);
    if (!reply.ok) { toast(t("Cannot restart with that"), errorText(reply.error), "error"); app.requestRender(true); return false; }
    return true;
  },

  openPicker: tab => openPicker(app, tab),
  openConfig: () => openConfig(app),
  openHelp: () => openHelp(app),

  share() {
    const url = withLang(location.href);        // the link opens in the language of the one who shares it
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(() => toast(t("Link copied"), url));
    else toast(t("Link to this room"), url, "info", 9000);
  },

  brokerMenu(id, anchor) {
    const b = store.brokers.get(id);
    if (!b) return;
    store.ui.selectedBroker = id;
    app.requestRender(true);
    const items = ACTIONS.filter(a => a.group === "broker" && inMode(a, store)).map(a => ({ id: a.id, label: labelOf(a, store, b), key: keyLabel(a),
      enabled: isEnabled(a, store, b), run: () => runAction(a, { app, store, broker: store.brokers.get(id) }) }));
    // plain concatenation: pybabel finds no msgid inside a template literal
    const kraft = !store.quorum ? "" : (b.fenced ? t(" · fenced") : "")
      + (b.broker_epoch !== undefined ? t(" · broker epoch {epoch}", { epoch: b.broker_epoch }) : "");
    const rack = rackOf(store, id);
    openMenu(t("Broker {id} · {state}", { id, state: b.state }) + (b.controller ? t(" · controller") : "") + kraft
      + (rack === null ? "" : t(" · zone {rack}", { rack })), items, anchor);
  },

  /** The actions on one zone (a run with racks): each is one command with "rack". */
  zoneMenu(rack, anchor) {
    const z = zoneOf(store, rack);
    if (!z.brokers.length && !z.voters.length) return;
    const items = ACTIONS.filter(a => a.group === "zone").map(a => ({ id: a.id, label: labelOf(a, store, z),
      enabled: isEnabled(a, store, z), run: () => runAction(a, { app, store, zone: zoneOf(store, rack) }) }));
    const state = zoneState(z, store.links, z.others).text;
    openMenu(t("Zone {rack} · {state}", { rack, state }), items, anchor);
  },

  /** One zone action at once (the zone box's own button): the same path as the menu's item. */
  zoneAction(rack, id) {
    const action = ACTIONS.find(a => a.id === id);
    if (action) runAction(action, { app, store, zone: zoneOf(store, rack) });
  },

  /** The actions on one controller voter (KRaft eras). */
  controllerMenu(id, anchor) {
    const v = voterOf(store, id);
    if (!v) return;
    const items = ACTIONS.filter(a => a.group === "controller").map(a => ({ id: a.id, label: labelOf(a, store, v),
      enabled: isEnabled(a, store, v), run: () => runAction(a, { app, store, voter: voterOf(store, id) }) }));
    const active = store.quorum.active === id ? t(" · active controller") : "";
    openMenu(t("Controller {id} · Raft {role}, epoch {epoch}", { id, role: v.role, epoch: v.epoch }) + active, items, anchor);
  },

  partitionMenu(key, anchor) {
    const p = store.partitions.get(key);
    if (!p) return;
    const items = [
      { id: "inspect", label: t("Inspect the logs (record by record)…"), run: () => openInspect(app, key) },
      { id: "preferred", label: t("Preferred replica election (→ broker {id})", { id: p.replicas[0] }),
        run: () => app.command({ op: "elect_preferred", topic: p.topic, partition: p.partition }, t("preferred election {partition}", { partition: key })) },
      "-",
      { id: "produce-all", label: t("Produce 10 records here, acks=all"),
        run: () => app.command({ op: "produce", topic: p.topic, partition: p.partition, count: 10, acks: "all", producer: "console" }, t("produce 10 to {partition} (acks={acks})", { partition: key, acks: "all" })) },
      { id: "produce-1", label: t("Produce 10 records here, acks=1"),
        run: () => app.command({ op: "produce", topic: p.topic, partition: p.partition, count: 10, acks: "1", producer: "console" }, t("produce 10 to {partition} (acks={acks})", { partition: key, acks: "1" })) },
      "-",
      { id: "describe", label: "kafka-topics.sh --describe --topic " + p.topic, run: () => { app.showTab("cli"); cli.exec(`kafka-topics.sh --describe --topic ${p.topic}`); } },
      // KRaft has no state znode: its state is the PartitionChangeRecords in the quorum panel
      store.quorum ? { id: "state", label: t("its records in the metadata log"), run: () => app.showTab("zk") }
        : { id: "state", label: t("get its state znode"), run: () => { app.showTab("cli"); cli.exec(`get /brokers/topics/${p.topic}/partitions/${p.partition}/state`); } },
    ];
    openMenu(key, items, anchor);
  },

  selectEvent: (e, reveal = true) => view.selectEvent(e, reveal),

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
    toast(t("{invariant} in {partition}", { invariant: v.invariant, partition: key }), cause ? t("cause: {type} at {t} — {reason}", { type: cause.type, t: seconds(cause.t_ms), reason: reason(cause.reason) }) : reason(v.detail), "error", 9000);
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

const view = createView(app, { adaptStrips: true });
const { partitions, timeline, cli } = view;
app.perf = view.perf;

function onFrame(text) {
  const t0 = performance.now();
  let frame;
  try { frame = JSON.parse(text); } catch (e) { return; }
  store.bytes += text.length;
  store.wallLag = Date.now() - frame.wall_ms;
  if (view.apply(frame) === "gap" && !resyncing) {
    resyncing = true;
    conn.request("resync", {}).finally(() => { resyncing = false; });
  }
  view.perf.parse += performance.now() - t0;
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
    toast(t("That simulation is gone"), errorText(reply.error) + t(" — starting a new one."), "error");
  }
  const reply = await conn.request("create", { library: document.body.dataset.defaultScenario });
  if (reply.ok) afterJoin(reply.room);
  else toast(t("Cannot start a simulation"), errorText(reply.error), "error", 20000);
}

function afterJoin(room) {
  store.room = room.room;
  const path = "/r/" + encodeURIComponent(room.room);
  if (location.pathname !== path) history.replaceState(null, "", path);
}

function onKey(e) {
  if (!pageKey(e)) return;
  if (menuOpen() && e.key !== "Escape" && !/^[a-zA-Z]$/.test(e.key)) return;
  const found = actionForKey(e.key, store);
  if (!found) return;
  e.preventDefault();
  closeMenu();
  if (found.select !== undefined) {
    if (store.brokers.has(found.select)) { app.selectBroker(found.select); toast(t("Broker {id} selected", { id: found.select }), store.quorum
      ? t("k crash · s start · d shutdown · g pause · z isolate from the controllers · i from the brokers")
      : t("k crash · s start · d shutdown · g pause · z/i isolate · x expire session")); }
    return;
  }
  runAction(found, { app, store });
}

document.addEventListener("keydown", onKey);
view.start();

conn = connectSocket({
  onFrame,
  onConnect: () => { setConn(true, t("live")); joinOrCreate(); },
  onDisconnect: reason => setConn(false, t("reconnecting…") + (reason ? "" : "")),
});
app.socket = conn.socket;     // the tests drop and restore the connection through it

// The page's state: what the server's frames say (entities keyed like the server's "b:1",
// "p:orders-0", "z:/controller", "c:p1"), plus what the user is looking at. Frames are applied
// here; renderers read from here and are told which keys changed since they last drew.

import { t } from "./i18n.js";

const MAX_EVENTS = 4000;
const MAX_MESSAGES = 500;

export function createStore() {
  return {
    room: null, seq: 0, run: null,
    clock: null, clockAt: 0, wallLag: 0,
    meta: null, controller: null, quorum: null, links: null, records: null, ledger: [],
    brokers: new Map(), partitions: new Map(), znodes: new Map(), clients: new Map(),
    events: [], violations: [], messages: [], msgsSkipped: 0,
    // what changed since the last render
    changed: new Set(), zkChanges: new Map(), dirty: true,
    flags: { events: false, violations: false, meta: true, clock: true, records: true, reset: true },
    ui: {
      selectedBroker: null, selectedEvent: null, selectedZnode: null,
      highlight: emptyHighlight(), tab: "timeline",
    },
    frames: 0, bytes: 0,
  };
}

export function emptyHighlight() {
  return { brokers: new Set(), partitions: new Set(), paths: new Set(), records: new Set(), voters: new Set(), offsets: new Set(), active: false };
}

/** Apply one frame (parsed JSON). Returns "ok", or "gap" when it does not follow what we hold. */
export function applyFrame(store, frame, now) {
  if (!frame.full && frame.base !== store.seq) return "gap";
  const newRun = frame.run !== store.run;
  if (frame.full) resetEntities(store, newRun);
  for (const [key, value] of Object.entries(frame.set)) setEntity(store, key, value, frame.full);
  for (const key of frame.del) deleteEntity(store, key);
  mergeEvents(store, frame.events, frame.full && !newRun, newRun);
  if (frame.violations.length) {
    if (frame.full) store.violations = frame.violations.slice();
    else store.violations.push(...frame.violations);
    store.flags.violations = true;
  } else if (frame.full) {
    store.violations = [];
    store.flags.violations = true;
  }
  for (const m of frame.msgs) {
    store.messages.push({ id: m[0], src: m[1], dst: m[2], type: m[3], sent: m[4], deliver: m[5], dropped: m[6], born: now });
  }
  if (store.messages.length > MAX_MESSAGES) store.messages.splice(0, store.messages.length - MAX_MESSAGES);
  store.msgsSkipped = frame.msgs_skipped;
  store.clock = frame.clock;
  store.clockAt = now;
  store.seq = frame.seq;
  store.run = frame.run;
  store.room = frame.clock.room;
  store.flags.clock = true;
  store.dirty = true;
  store.frames += 1;
  return "ok";
}

function resetEntities(store, newRun) {
  for (const path of store.znodes.keys()) store.zkChanges.set(path, "reset");
  store.brokers.clear(); store.partitions.clear(); store.znodes.clear(); store.clients.clear();
  store.quorum = null;      // a full frame of a ZooKeeper-mode run carries none
  if (newRun) {
    store.events = []; store.violations = []; store.messages = [];
    store.ui.selectedEvent = null;
    store.ui.highlight = emptyHighlight();
  }
  store.flags.reset = true;
  store.flags.meta = true;
}

function setEntity(store, key, value, full) {
  const colon = key.indexOf(":");
  const kind = colon > 0 ? key.slice(0, colon) : key;
  const id = colon > 0 ? key.slice(colon + 1) : key;
  switch (kind) {
    case "b": store.brokers.set(Number(id), value); break;
    case "p": store.partitions.set(id, value); break;
    case "z": {
      const had = store.znodes.get(id);
      store.znodes.set(id, value);
      if (!full) store.zkChanges.set(id, had ? "changed" : "born");
      break;
    }
    case "c": store.clients.set(id, value); break;
    case "meta": store.meta = value; store.flags.meta = true; break;
    case "controller": store.controller = value; break;
    case "quorum": store.quorum = value; break;      // KRaft eras: the controller quorum and its metadata log
    case "links": store.links = value; break;
    case "records": store.records = value; store.flags.records = true; break;
    case "ledger": store.ledger = value; store.flags.records = true; break;
    default: return;
  }
  store.changed.add(key);
}

function deleteEntity(store, key) {
  const colon = key.indexOf(":");
  const kind = key.slice(0, colon), id = key.slice(colon + 1);
  if (kind === "b") store.brokers.delete(Number(id));
  else if (kind === "p") store.partitions.delete(id);
  else if (kind === "z") { store.znodes.delete(id); store.zkChanges.set(id, "gone"); }
  else if (kind === "c") store.clients.delete(id);
  store.changed.add(key);
}

function mergeEvents(store, incoming, resync, newRun) {
  if (!incoming.length && !resync && !newRun) return;
  let events = store.events;
  if (resync && incoming.length) {
    const first = incoming[0].i;
    events = events.filter(e => e.i < first);
  }
  const last = events.length ? events[events.length - 1].i : -1;
  for (const e of incoming) if (e.i > last || resync) events.push(e);
  if (events.length > MAX_EVENTS) events = events.slice(events.length - MAX_EVENTS);
  store.events = events;
  store.flags.events = true;
}

/** Partitions in topic order, then partition order. */
export function sortedPartitions(store) {
  return Array.from(store.partitions.values()).sort((a, b) => a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition);
}

export function sortedBrokers(store) {
  return Array.from(store.brokers.values()).sort((a, b) => a.id - b.id);
}

export function takeChanges(store) {
  const changed = store.changed, zk = store.zkChanges, flags = store.flags;
  store.changed = new Set();
  store.zkChanges = new Map();
  store.flags = { events: false, violations: false, meta: false, clock: false, records: false, reset: false };
  store.dirty = false;
  return { changed, zk, flags };
}

/** What an event touched, for highlighting: brokers, partitions, znode paths and record ids. */
export function touched(event) {
  const hl = emptyHighlight();
  hl.active = true;
  for (const f of ["broker", "leader", "previous_leader"]) {
    if (typeof event[f] === "number" && event[f] >= 0) hl.brokers.add(event[f]);
  }
  if (Array.isArray(event.isr_before) && Array.isArray(event.isr)) {
    for (const b of event.isr_before) if (!event.isr.includes(b)) hl.brokers.add(b);
    for (const b of event.isr) if (!event.isr_before.includes(b)) hl.brokers.add(b);
  }
  if (event.topic !== undefined && event.topic !== null && event.partition !== undefined && event.partition !== null) {
    hl.partitions.add(`${event.topic}-${event.partition}`);
    hl.paths.add(`/brokers/topics/${event.topic}/partitions/${event.partition}/state`);
  }
  if (Array.isArray(event.partitions)) {
    for (const p of event.partitions) {
      if (typeof p === "string") hl.partitions.add(p);
      else if (p && p.topic !== undefined) hl.partitions.add(`${p.topic}-${p.partition}`);
    }
  }
  if (typeof event.path === "string") hl.paths.add(event.path);
  if (Array.isArray(event.deleted)) for (const p of event.deleted) hl.paths.add(p);
  if (event.type === "controller_elected" || event.type === "controller_resigned") { hl.paths.add("/controller"); hl.paths.add("/controller_epoch"); }
  if (event.type === "broker_started" || event.type === "broker_registered") hl.paths.add(`/brokers/ids/${event.broker}`);
  // KRaft: the controller voter an event is about (raft_leader_elected, controller_activated)
  if (typeof event.controller === "number") hl.voters.add(event.controller);
  if (Array.isArray(event.records)) for (const r of event.records) hl.records.add(r);
  return hl;
}

const CATEGORY = {
  isr_shrink: "isr", isr_expand: "isr", isr_update_failed: "isr", isr_change_notification: "isr", alter_partition: "isr",
  leader_elected: "election", partition_offline: "election", become_leader: "election", become_follower: "election",
  become_follower_skipped: "election", partition_created: "election", auto_rebalance: "election",
  truncation: "log", high_watermark: "log",
  controller_elected: "controller", controller_resigned: "controller", broker_change: "controller",
  stale_controller_fenced: "controller",
  broker_starting: "broker", broker_started: "broker", broker_stopped: "broker", broker_registered: "broker",
  session_expired: "broker", zk_disconnected: "broker", zk_reconnected: "broker", zk_session_lost: "broker",
  produce_error: "client", produce_failed: "client", consumer_error: "client", consumer_reset: "client",
  consumer_truncation_detected: "client", consumer_read_replica: "client",
  producer_epoch_bump: "client", producer_id_reset: "client", producer_id_set: "client",
  fault: "fault", violation: "violation",
  // KRaft eras (docs/scenario-format.md §4.2)
  partition_change: "election", isr_updated: "isr", raft_leader_elected: "controller", controller_activated: "controller",
  raft_candidate: "controller", raft_prospective: "controller", raft_leader_resigned: "controller",
  raft_fetch_timeout: "controller", controller_started: "controller", controller_stopped: "controller",
  controller_deactivated: "controller",
  broker_fenced: "broker", broker_unfenced: "broker", registration_rejected: "broker",
  controlled_shutdown_requested: "broker", controlled_shutdown_started: "broker", controlled_shutdown_granted: "broker",
};

export const CATEGORIES = [
  { id: "isr", label: "ISR" }, { id: "election", label: t("leaders") }, { id: "log", label: t("truncation") },
  { id: "hw", label: t("HW moves") }, { id: "controller", label: t("controller") }, { id: "broker", label: t("brokers & ZK") },
  { id: "client", label: t("clients") }, { id: "fault", label: t("actions & faults") }, { id: "violation", label: t("violations") },
  { id: "other", label: t("other") },
];

/** A category's name in the run's era: KRaft runs have no ZooKeeper, their brokers register with
 *  and heartbeat to the controller quorum. */
export function categoryLabel(category, kraft) {
  return kraft && category.id === "broker" ? t("brokers & quorum") : category.label;
}

export function categoryOf(event) {
  if (event.type === "high_watermark") return "hw";
  return CATEGORY[event.type] || "other";
}

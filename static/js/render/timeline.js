// The replication story: every event with the rule that fired, filterable, clickable.
import { h, clear, setText } from "../dom.js";
import { categoryOf, categoryLabel, CATEGORIES } from "../store.js";
import { t, N_, known } from "../i18n.js";
import { reason } from "../i18n_reasons.js";
import { isKraft } from "../kraft.js";

const MAX_ROWS = 700;
const LABEL = {
  isr_shrink: N_("ISR shrink"), isr_expand: N_("ISR expand"), isr_update_failed: N_("ISR write failed"),
  isr_change_notification: N_("ISR notification"), leader_elected: N_("leader elected"), partition_offline: N_("partition offline"),
  become_leader: N_("becomes leader"), become_follower: N_("becomes follower"), become_follower_skipped: N_("LeaderAndIsr skipped"),
  partition_created: N_("partition created"), auto_rebalance: N_("auto rebalance"), truncation: N_("truncation"),
  high_watermark: "HW", controller_elected: N_("controller elected"), controller_resigned: N_("controller resigned"),
  broker_change: N_("broker change"), stale_controller_fenced: N_("stale controller"), broker_starting: N_("broker starting"),
  broker_started: N_("broker registered"), broker_stopped: N_("broker stopped"), broker_registered: N_("broker re-registered"),
  session_expired: N_("session expired"), zk_disconnected: N_("ZK disconnected"), zk_reconnected: N_("ZK reconnected"),
  zk_session_lost: N_("ZK session lost"), produce_error: N_("produce error"), produce_failed: N_("produce failed"),
  consumer_error: N_("consumer error"), consumer_reset: N_("consumer reset"), consumer_truncation_detected: N_("consumer truncation"),
  consumer_read_replica: N_("read replica"), producer_epoch_bump: N_("producer epoch bump"),
  producer_id_reset: N_("producer id reset"), producer_id_set: N_("new producer id"),
  violation: "VIOLATION", events_skipped: "…",
  // KRaft eras (docs/scenario-format.md §4.2)
  partition_change: "PartitionChangeRecord", isr_updated: N_("ISR updated"), raft_leader_elected: N_("Raft leader elected"),
  controller_activated: N_("controller active"), controller_deactivated: N_("controller inactive"), raft_candidate: N_("Raft candidate"),
  raft_prospective: N_("Raft pre-vote"), raft_leader_resigned: N_("Raft leader resigned"), raft_fetch_timeout: N_("Raft fetch timeout"),
  controller_started: N_("controller started"), controller_stopped: N_("controller stopped"),
  broker_fenced: N_("broker fenced"), broker_unfenced: N_("broker unfenced"), registration_rejected: N_("registration rejected"),
  controlled_shutdown_requested: N_("shutdown requested"), controlled_shutdown_started: N_("controlled shutdown"),
  controlled_shutdown_granted: N_("shutdown granted"),
};

// operations that break something; the others (produce, consume, set_config...) are just actions
const FAULT_OPS = new Set(["crash", "shutdown", "pause", "isolate", "cut", "partition", "slow", "expire_session"]);

/** Who made a timeline operation happen: the viewer's own command, or the scenario's timeline
 *  (a fault it injects, or a scripted action). */
export function opOrigin(e) {
  if (e.origin === "user") return N_("you did");
  return FAULT_OPS.has(e.op) ? N_("fault injected") : N_("scenario timeline");
}

// a leader_elected row by how the controller chose (its kind), and an ISR notification by its
// stage: whole labels, so the English stays "leader elected (clean)" and the Chinese reads well
const KIND = { clean: N_("leader elected (clean)"), unclean: N_("leader elected (unclean)"),
  preferred: N_("leader elected (preferred)"), controlled_shutdown: N_("leader elected (controlled_shutdown)"),
  elr: N_("leader elected (elr)"), last_known_leader: N_("leader elected (last_known_leader)") };
const STAGE = { created: N_("ISR notification created"), processed: N_("ISR notification processed") };

// KRaft words for the same history types: a broker's registration is answered by the controller
// (its reply carries the broker epoch), then the RegisterBrokerRecord is applied — two steps, not
// one registration logged twice; a leaderless partition change comes from the metadata log.
const KRAFT_LABEL = {
  broker_started: N_("registration answered"), broker_registered: "RegisterBrokerRecord",
  become_follower_skipped: N_("partition change skipped"),
};

/** `kraft`: the run is in a KRaft era (its words differ, docs/scenario-format.md §4.2). */
export function eventLabel(e, kraft = false) {
  if (kraft && KRAFT_LABEL[e.type]) return known(KRAFT_LABEL[e.type]);
  if (e.type === "leader_elected" && e.kind) return KIND[e.kind] ? known(KIND[e.kind]) : t("leader elected ({kind})", { kind: e.kind });
  if (e.type === "isr_change_notification" && e.stage) return STAGE[e.stage] ? known(STAGE[e.stage]) : t("ISR notification {stage}", { stage: e.stage });
  if (e.type === "alter_partition") return e.phase === "sent" ? t("{api} sent", { api: e.api || "AlterIsr" }) : t("{api} answered", { api: e.api || "AlterIsr" });
  if (e.type === "fault") return t("{origin}: {op}", { origin: known(opOrigin(e)), op: e.op || "" });
  if (e.type === "violation") return t("violation: {invariant}", { invariant: e.invariant });
  if (e.type === "broker_registered" && e.broker_epoch !== undefined) return known(LABEL.broker_started);   // KRaft: a RegisterBrokerRecord
  return known(LABEL[e.type] || e.type);
}

// Kafka's answers to AlterIsr / AlterPartition (docs/model.md §17.4, §17.5), in its words
const ALTER_ERRORS = {
  FENCED_LEADER_EPOCH: N_("the controller knows a newer leader epoch: the proposal comes from an older leadership; the partition stays pending until the LeaderAndIsr of the new epoch arrives"),
  INVALID_UPDATE_VERSION: N_("the partition epoch (zkVersion) it sent is not the znode's: the state changed meanwhile; the leader waits for the LeaderAndIsr that brings the new one"),
  INELIGIBLE_REPLICA: N_("KIP-841: a proposed replica is shutting down or not alive; the leader goes back to its committed ISR"),
  NOT_CONTROLLER: N_("that broker is not the controller (any more): the same request goes to the controller named in the metadata"),
  STALE_BROKER_EPOCH: N_("the leader's broker epoch is older than its registration in ZooKeeper: the request is rebuilt and sent again"),
  UNKNOWN_TOPIC_OR_PARTITION: N_("the controller does not know the partition"),
  INVALID_REQUEST: N_("the controller refuses the leader recovery state asked for (KIP-704)"),
};

/** An `alter_partition` history entry as a sentence (scenario-format §4.1); `kraft`: the run is in
 *  a KRaft era, where the active controller answers with a PartitionChangeRecord, not a znode write. */
export function explainAlterPartition(e, kraft = false) {
  const api = e.api || "AlterIsr";
  const isr = `[${(e.proposed_isr || []).join(",")}]`;
  const partition = `${e.topic}-${e.partition}`, broker = e.broker;
  const at = kraft ? `leaderEpoch ${e.leader_epoch}, partitionEpoch ${e.partition_epoch}`
    : `leaderEpoch ${e.leader_epoch}, partitionEpoch (zkVersion) ${e.partition_epoch}`;
  if (e.phase === "sent") {
    return kraft
      ? t("leader {broker} sends {api} for {partition} to the active controller: ISR {isr} ({at}). Until the answer the ISR is pending: acks=all and min.insync.replicas still count the committed ISR.", { broker, api, partition, isr, at })
      : t("leader {broker} sends {api} for {partition} to the controller: ISR {isr} ({at}). Until the answer the ISR is pending: acks=all and min.insync.replicas still count the committed ISR; no ZooKeeper write by the leader, no /isr_change_notification.", { broker, api, partition, isr, at });
  }
  const committed = `[${(e.isr || e.proposed_isr || []).join(",")}]`;
  if (!e.error && kraft) {
    return t("the active controller appended a PartitionChangeRecord (ISR {isr}, partition epoch {epoch}) to the metadata log and answered {api} of leader {broker} once it was committed: brokers apply it as they fetch the log.", { isr: committed, epoch: e.new_partition_epoch, api, broker });
  }
  if (!e.error) {
    return t("the controller wrote ISR {isr} to the partition state znode (zkVersion {epoch}), sent UpdateMetadata and answered {api} of leader {broker}: the change is committed.", { isr: committed, epoch: e.new_partition_epoch, api, broker });
  }
  return t("the controller refused {api} of leader {broker} for {partition} (ISR {isr}, {at}): {error} — {why}", { api, broker, partition, isr, at, error: e.error,
    why: ALTER_ERRORS[e.error] ? known(ALTER_ERRORS[e.error]) : t("the leader keeps its committed ISR") });
}

export function eventWhere(e) {
  const parts = [];
  if (e.topic !== undefined && e.topic !== null && e.partition !== undefined && e.partition !== null) parts.push(`${e.topic}-${e.partition}`);
  if (typeof e.broker === "number") parts.push(`b${e.broker}`);
  if (e.producer) parts.push(e.producer);
  if (e.consumer) parts.push(e.consumer);
  if (e.error) parts.push(e.error);
  return parts.join(" · ");
}

export function createTimeline(app) {
  const panel = document.getElementById("panel-timeline");
  const enabled = new Set(CATEGORIES.map(c => c.id).filter(id => id !== "hw"));
  const filters = h("div.tl-filters");
  for (const c of CATEGORIES) {
    const box = h("input", { type: "checkbox", checked: enabled.has(c.id), onchange: () => {
      if (box.checked) enabled.add(c.id); else enabled.delete(c.id);
      rebuild = true; app.requestRender();
    } });
    filters.appendChild(h("label.c-" + c.id, { title: t("show {category} events", { category: c.label }) }, box, h("span", { text: categoryLabel(c, false) })));
  }
  // the filters' words follow the era: "brokers & ZK" in ZooKeeper eras, "brokers & quorum" in KRaft
  function relabel() {
    CATEGORIES.forEach((c, k) => {
      const label = filters.children[k];
      setText(label.lastChild, categoryLabel(c, kraft));
      label.title = t("show {category} events", { category: categoryLabel(c, kraft) });
    });
  }
  const search = h("input.tl-search", { type: "text", placeholder: t("filter: text, partition, broker (e.g. orders-0, b2, truncat)"),
    oninput: () => { rebuild = true; app.requestRender(); } });
  const listEl = h("div.tl-list", { role: "list" });
  const more = h("div.tl-more");
  panel.append(filters, search, more, listEl);
  const count = document.getElementById("tab-count-timeline");
  let rebuild = true, lastI = -1, run = null;
  let atBottom = true;      // kept from scroll events, so rendering never has to read layout
  listEl.addEventListener("scroll", () => { atBottom = listEl.scrollHeight - listEl.scrollTop - listEl.clientHeight < 40; }, { passive: true });
  const rows = new Map();
  let kraft = false;        // the run's era speaks KRaft: set from the store before rows are drawn

  function matches(e) {
    const cat = e.type === "events_skipped" ? "other" : categoryOf(e);
    if (!enabled.has(cat)) return false;
    const q = search.value.trim().toLowerCase();
    if (!q) return true;
    const hay = `${e.type} ${eventLabel(e, kraft)} ${eventWhere(e)} ${e.reason || ""} ${e.reason ? reason(e.reason) : ""}`.toLowerCase();
    return q.split(/\s+/).every(w => hay.includes(w));
  }

  // A run of the same event (a producer's PRODUCE ERROR on every retry, same partition, same
  // error) is one row with a count and the time span, not a flood of rows. Retries of two
  // producers interleave, so a repeat may join a row a few rows up, but only across other
  // repeats: an election or an ISR change between them keeps its place in the story.
  const REPEATING = new Set(["produce_error", "produce_failed", "consumer_error", "isr_update_failed", "high_watermark"]);
  const sameKey = e => `${e.type}|${eventLabel(e, kraft)}|${eventWhere(e)}`;
  let recent = [];          // the last rows drawn: {key, type, el, n, first, times, t}

  function group(e, key) {
    for (let k = recent.length - 1; k >= 0 && k >= recent.length - 6; k--) {
      const r = recent[k];
      if (r.key === key) return r;
      if (!REPEATING.has(e.type) || !REPEATING.has(r.type)) return null;
    }
    return null;
  }

  function row(e) {
    const key = sameKey(e);
    const g = e.type === "violation" ? null : group(e, key);
    if (g) {
      g.n += 1;
      setText(g.times, `×${g.n}`);
      setText(g.t, `${(g.first / 1000).toFixed(3)}–${(e.t_ms / 1000).toFixed(3)} s`);
      g.el.dataset.count = String(g.n);
      rows.set(e.i, g.el);
      return null;
    }
    const tEl = h("span.t", { text: (e.t_ms / 1000).toFixed(3) + " s" });
    const times = h("span.times", { title: t("repeated events, collapsed") });
    const el = h("div.ev.c-" + categoryOf(e) + (e.type === "fault" ? ".o-" + opOrigin(e).split(" ")[0] : ""),
      { role: "listitem", dataset: { i: e.i }, onclick: () => app.selectEvent(e) },
      h("div.evhead", null, tEl, h("span.type", { text: eventLabel(e, kraft) }), h("span.where", { text: eventWhere(e) }), times),
      e.reason ? h("div.reason", { text: e.type === "alter_partition" ? explainAlterPartition(e, kraft) : reason(e.reason) }) : null);
    rows.set(e.i, el);
    recent.push({ key, type: e.type, el, n: 1, first: e.t_ms, times, t: tEl });
    if (recent.length > 12) recent = recent.slice(-6);
    return el;
  }
  const add = (frag, e) => { const el = row(e); if (el) frag.appendChild(el); };

  function render(store, changes) {
    if (store.run !== run) { run = store.run; rebuild = true; }
    if (isKraft(store) !== kraft) { kraft = isKraft(store); rebuild = true; relabel(); }
    if (!changes.flags.events && !rebuild) return;
    if (rebuild) {
      clear(listEl); rows.clear(); recent = [];
      const shown = store.events.filter(matches);
      const tail = shown.slice(-MAX_ROWS);
      const frag = document.createDocumentFragment();
      for (const e of tail) add(frag, e);
      listEl.appendChild(frag);
      lastI = store.events.length ? store.events[store.events.length - 1].i : -1;
      rebuild = false;
    } else {
      const frag = document.createDocumentFragment();
      for (const e of store.events) {
        if (e.i <= lastI) continue;
        if (matches(e)) add(frag, e);
      }
      if (store.events.length) lastI = Math.max(lastI, store.events[store.events.length - 1].i);
      listEl.appendChild(frag);
      while (listEl.children.length > MAX_ROWS) {
        const gone = listEl.firstChild;
        for (const [i, el] of rows) if (el === gone) rows.delete(i);
        gone.remove();
      }
    }
    markSelected(store);
    setText(count, store.clock ? String(store.clock.history_len) : "");
    setText(more, store.events.length >= 4000 ? t("older events are not kept on the page") : "");
    if (atBottom) listEl.scrollTop = 1e9;     // clamped by the browser: no layout read
  }

  let marked = undefined;
  function markSelected(store) {
    const sel = store.ui.selectedEvent;
    if (sel === marked && (sel === null || (rows.has(sel) && rows.get(sel).classList.contains("selected")))) return;
    marked = sel;
    for (const el of listEl.querySelectorAll(".ev.selected")) if (Number(el.dataset.i) !== sel) el.classList.remove("selected");
    if (sel !== null && rows.has(sel)) rows.get(sel).classList.add("selected");
  }

  function reveal(i, store) {
    if (!rows.has(i)) {
      search.value = "";
      enabled.add(categoryOf(store.events.find(e => e.i === i) || { type: "other" }));
      for (const box of filters.querySelectorAll("input")) box.checked = enabled.has(CATEGORIES[[...filters.children].indexOf(box.parentElement)].id);
      rebuild = true;
      render(store, { flags: { events: true } });
    }
    markSelected(store);
    const el = rows.get(i);
    if (el) el.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  return { render, reveal, refreshSelection: markSelected };
}

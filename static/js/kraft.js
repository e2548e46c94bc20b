// KRaft mode, read from the frame: whether the run has a controller quorum instead of ZooKeeper,
// and what Kafka's own tools print about it (kafka-metadata-quorum.sh, the KRaft columns of
// kafka-topics.sh). Pure functions of the state; no DOM.
import { t } from "./i18n.js";

/** A KRaft-era run: its frames carry the controller quorum (and no znodes). */
export function isKraft(store) { return Boolean(store && store.quorum); }

/** Ids of the controller voters (empty in ZooKeeper mode). */
export function voterIds(store) {
  return store && store.quorum ? store.quorum.voters.map(v => v.id) : [];
}

/** Dedicated voters are network nodes of their own; in combined mode a voter is also a broker
 *  and is drawn as that broker. */
export function dedicatedVoters(store) {
  return voterIds(store).filter(id => !store.brokers.has(id));
}

/** Whether the era elects from Eligible Leader Replicas (KIP-966): 4.1 by default, switched by
 *  eligible.leader.replicas.version. */
export function elrEnabled(meta) {
  const v = meta && meta.config ? meta.config["eligible.leader.replicas.version"] : undefined;
  return v !== undefined && v !== null && Number(v) >= 1;
}

// Kafka prints Uuids in URL-safe base64 without padding (22 characters). The simulator has no
// random Uuids, so a node's directory id and a topic's id are derived from its name: stable
// across frames and runs, and never mistaken for Uuid.ZERO.
function uuidOf(text) {
  const bytes = new Uint8Array(16);
  let x = 2166136261;
  for (let i = 0; i < 16; i++) {
    for (const ch of text + i) x = Math.imul(x ^ ch.charCodeAt(0), 16777619) >>> 0;
    bytes[i] = x & 0xff;
  }
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
export const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";
export const topicId = name => uuidOf("topic:" + name);
export const directoryId = broker => uuidOf("broker:" + broker);
const CLUSTER_ID = "SVNSTGFiLVNpbXVsYXRvcg";          // a fixed id: the simulator runs one cluster

/** A voter's high watermark as the page shows it: a stopped voter keeps its log on disk (its log
 *  end offset stays) but not its high watermark, which it learns again from the leader once it
 *  runs; the 0 the frame carries while it is stopped is not a value the voter holds. */
export function voterHw(v, short = false) {
  if (v.state !== "stopped") return String(v.high_watermark);
  return short ? "–" : t("unknown (stopped)");       // the quorum panel's words, never a tool's line
}

function activeVoter(q) { return q.voters.find(v => v.id === q.active) || null; }

/** What the Raft leader answers to DescribeQuorum: per voter and observer its log end offset as
 *  the leader knows it (the offset of its last Fetch, -1 before one) and the fetch timestamps on
 *  the simulated clock (`quorum.fetches`, app/runner/live_view.py FetchClock); the leader's own
 *  row carries its log end and "now", as LeaderState.describeReplicaState does (3.9, 4.1).
 *  Observers are the brokers whose Fetch this leader took; a frame without `fetches` (an older
 *  recording) lists every registered broker with -1 timestamps. */
export function describeQuorum(quorum, brokers, nowMs) {
  const leader = activeVoter(quorum);
  const fetches = quorum.fetches;
  const voterIds = new Set(quorum.voters.map(v => v.id));
  const known = id => (fetches && fetches[id]) || [-1, -1, -1];
  const row = (id, dir, status, [end, fetch, caught]) => ({ id, dir, status, end, fetch, caught });
  const voters = (leader ? [leader, ...quorum.voters.filter(v => v !== leader)] : quorum.voters).map(v => v === leader
    ? row(v.id, ZERO_UUID, "Leader", [v.log_end_offset, nowMs, nowMs])
    : fetches ? row(v.id, ZERO_UUID, "Follower", known(v.id)) : row(v.id, ZERO_UUID, "Follower", [v.log_end_offset, -1, -1]));
  const observerIds = fetches ? Object.keys(fetches).map(Number).filter(id => !voterIds.has(id)).sort((a, b) => a - b)
    : brokers.filter(b => typeof b.broker_epoch === "number" && b.broker_epoch >= 0).map(b => b.id);
  const byId = new Map(brokers.map(b => [b.id, b]));
  const observers = observerIds.map(id => fetches ? row(id, directoryId(id), "Observer", known(id))
    : row(id, directoryId(id), "Observer", [byId.get(id).metadata_offset, -1, -1]));
  return { leader: leader ? voters[0] : null, voters, observers };
}

/** `kafka-metadata-quorum.sh describe --status`, in the layout of Kafka 3.9+ (MetadataQuorumCommand:
 *  voters and observers as JSON-like objects on one line). MaxFollowerLag and MaxFollowerLagTimeMs
 *  compare the leader with the voter of the smallest log end, by their last caught-up times. */
export function quorumStatus(quorum, brokers, nowMs = 0) {
  const d = describeQuorum(quorum, brokers, nowMs);
  const laggard = d.voters.reduce((m, v) => (m === null || v.end < m.end ? v : m), null);
  const maxLag = d.leader && laggard ? d.leader.end - laggard.end : 0;
  const lagMs = !d.leader || !laggard || laggard === d.leader ? 0
    : laggard.caught >= 0 ? d.leader.caught - laggard.caught : -1;
  const voters = quorum.voters.map(v => `{"id": ${v.id}, "endpoints": ["CONTROLLER://controller-${v.id}:9093"]}`);
  const obs = d.observers.map(o => `{"id": ${o.id}, "directoryId": "${o.dir}"}`);
  const pad = k => (k + ":").padEnd(24);
  return [
    pad("ClusterId") + CLUSTER_ID,
    pad("LeaderId") + (quorum.active === null || quorum.active === undefined ? -1 : quorum.active),
    pad("LeaderEpoch") + quorum.raft_epoch,
    pad("HighWatermark") + quorum.high_watermark,
    pad("MaxFollowerLag") + maxLag,
    pad("MaxFollowerLagTimeMs") + lagMs,
    pad("CurrentVoters") + `[${voters.join(", ")}]`,
    pad("CurrentObservers") + `[${obs.join(", ")}]`,
  ];
}

/** `kafka-metadata-quorum.sh describe --replication` (the 3.9+ columns): the leader, the other
 *  voters, then the observers; cells left-aligned, padded and tab-separated like
 *  ToolsUtils.prettyPrintTable; timestamps in ms of the simulated clock. */
export function quorumReplication(quorum, brokers, nowMs = 0) {
  const d = describeQuorum(quorum, brokers, nowMs);
  const leo = d.leader ? d.leader.end : 0;
  const rows = [...d.voters, ...d.observers].map(r => [r.id, r.dir, r.end, leo - r.end, r.fetch, r.caught, r.status]);
  return prettyTable(["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"], rows);
}

function prettyTable(header, rows) {
  const all = [header, ...rows].map(r => r.map(String));
  const widths = header.map((_, i) => Math.max(...all.map(r => r[i].length)));
  return all.map(r => r.map((c, i) => c.padEnd(widths[i])).join("\t") + "\t");
}

/** The `Elr:` and `LastKnownElr:` cells of a partition line (3.8+ against a KRaft broker: always
 *  printed, empty when ELR is off or empty). */
export function elrColumns(p) {
  return `\tElr: ${(p.elr || []).join(",")}\tLastKnownElr: ${(p.last_known_elr || []).join(",")}`;
}

/** What one metadata record says, for the quorum panel's line (which names its type already). */
export function recordSummary(r) {
  if (r.text) {
    // the engine's text starts with the record's name ("RegisterBrokerRecord broker 0 …"): drop it
    const first = r.text.split(" ", 1)[0];
    return spellOut(r.type.startsWith(first) ? r.text.slice(first.length).trim() : r.text);
  }
  if (r.type === "PartitionChangeRecord") return `${r.topic}-${r.partition} leader ${r.leader} ISR [${(r.isr || []).join(",")}]`;
  if (r.broker !== undefined) return `broker ${r.broker}`;
  return "";
}

/** The engine's compact "epoch 3/5" and "lke" in words a reader needs no key for. */
export function spellOut(text) {
  return text.replace(/\bepoch (\d+)\/(\d+)/g, "leader epoch $1, partition epoch $2").replace(/\blke\b/g, "last known ELR");
}

/** What a metadata record changed, as the page highlights it: a partition, a broker, or nothing. */
export function recordTarget(r) {
  if (r.topic !== undefined && r.partition !== undefined && r.partition !== null) return { partition: `${r.topic}-${r.partition}` };
  if (typeof r.broker === "number") return { broker: r.broker };
  return null;
}

// KRaft mode, read from the frame: whether the run has a controller quorum instead of ZooKeeper,
// and what Kafka's own tools print about it (kafka-metadata-quorum.sh, the KRaft columns of
// kafka-topics.sh). Pure functions of the state; no DOM.

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
  return short ? "–" : "unknown (stopped)";
}

function activeVoter(q) { return q.voters.find(v => v.id === q.active) || null; }

/** Brokers the quorum leader sees as observers: every registered broker. A crashed broker stays
 *  listed (Kafka keeps observers for 300 s after their last fetch), its lag growing. */
function observers(brokers) {
  return brokers.filter(b => typeof b.broker_epoch === "number" && b.broker_epoch >= 0);
}

/** `kafka-metadata-quorum.sh describe --status`, in the layout of Kafka 3.9+ (MetadataQuorumCommand:
 *  voters and observers as JSON-like objects on one line). */
export function quorumStatus(quorum, brokers) {
  const leader = activeVoter(quorum);
  const leo = leader ? leader.log_end_offset : 0;
  const lags = quorum.voters.filter(v => v !== leader).map(v => leo - v.log_end_offset);
  const maxLag = leader && lags.length ? Math.max(0, ...lags) : 0;
  const voters = quorum.voters.map(v => `{"id": ${v.id}, "endpoints": ["CONTROLLER://controller-${v.id}:9093"]}`);
  const obs = observers(brokers).map(b => `{"id": ${b.id}, "directoryId": "${directoryId(b.id)}"}`);
  const pad = k => (k + ":").padEnd(24);
  return [
    pad("ClusterId") + CLUSTER_ID,
    pad("LeaderId") + (quorum.active === null || quorum.active === undefined ? -1 : quorum.active),
    pad("LeaderEpoch") + quorum.raft_epoch,
    pad("HighWatermark") + quorum.high_watermark,
    pad("MaxFollowerLag") + maxLag,
    // the frame has no per-voter fetch times: a caught-up quorum lags 0 ms, a lagging one "unknown"
    pad("MaxFollowerLagTimeMs") + (maxLag === 0 ? 0 : -1),
    pad("CurrentVoters") + `[${voters.join(", ")}]`,
    pad("CurrentObservers") + `[${obs.join(", ")}]`,
  ];
}

/** `kafka-metadata-quorum.sh describe --replication` (the 3.9+ columns): the leader, the other
 *  voters, then the brokers as observers; cells left-aligned, padded and tab-separated like
 *  ToolsUtils.prettyPrintTable. Fetch timestamps the frame does not carry print as -1. */
export function quorumReplication(quorum, brokers) {
  const leader = activeVoter(quorum);
  const leo = leader ? leader.log_end_offset : 0;
  const ts = v => (v === null || v === undefined ? -1 : v);
  const rows = [];
  const voters = leader ? [leader, ...quorum.voters.filter(v => v !== leader)] : quorum.voters;
  for (const v of voters) {
    rows.push([v.id, ZERO_UUID, v.log_end_offset, Math.max(0, leo - v.log_end_offset), ts(v.last_fetch_ms),
      ts(v.last_caught_up_ms), v === leader ? "Leader" : "Follower"]);
  }
  for (const b of observers(brokers)) {
    rows.push([b.id, directoryId(b.id), b.metadata_offset, Math.max(0, leo - b.metadata_offset), -1, -1, "Observer"]);
  }
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
    return r.type.startsWith(first) ? r.text.slice(first.length).trim() : r.text;
  }
  if (r.type === "PartitionChangeRecord") return `${r.topic}-${r.partition} leader ${r.leader} ISR [${(r.isr || []).join(",")}]`;
  if (r.broker !== undefined) return `broker ${r.broker}`;
  return "";
}

/** What a metadata record changed, as the page highlights it: a partition, a broker, or nothing. */
export function recordTarget(r) {
  if (r.topic !== undefined && r.partition !== undefined && r.partition !== null) return { partition: `${r.topic}-${r.partition}` };
  if (typeof r.broker === "number") return { broker: r.broker };
  return null;
}

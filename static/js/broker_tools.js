// Kafka's tools that print brokers as nodes, with their racks (broker.rack, docs/model.md §21):
// kafka-broker-api-versions.sh (every era) and, from 4.0, kafka-cluster.sh list-endpoints. Pure
// functions of the frame; no DOM. kafka-topics.sh --describe prints no racks in any release.
import { API_VERSIONS } from "./api_versions.js";

const PORT = 9092;
/** The broker's advertised host, as its registration names it (engine/server/broker.py). */
export const hostOf = id => `broker-${id}`;

function rackText(meta, id) {
  const rack = meta && meta.racks ? meta.racks[String(id)] : undefined;
  return rack === undefined || rack === null ? "null" : rack;
}

/** Whether the brokers' metadata lists broker `b` (what MetadataResponse returns): in ZooKeeper
 *  eras while its /brokers/ids znode lives (a crashed broker stays until its session expires),
 *  in KRaft while it is registered and not fenced. */
function inMetadata(b, znodes, kraft) {
  if (kraft) return typeof b.broker_epoch === "number" && b.broker_epoch >= 0 && !b.fenced;
  return Boolean(znodes && znodes.has(`/brokers/ids/${b.id}`));
}

/** Whether broker `b` answers a request from a new client: its process runs and is not stalled. */
function answers(b) { return b.state === "running" || b.state === "shutting_down"; }

/** Node.toString of the release: "broker-1:9092 (id: 1 rack: az-a)" (4.0+: "... isFenced: false)"). */
export function nodeText(meta, id, era) {
  return `${hostOf(id)}:${PORT} (id: ${id} rack: ${rackText(meta, id)}${era.node_suffix})`;
}

/** The lines of NodeApiVersions.toString(true): every API the broker advertises, in id order, as
 *  "Name(id): min to max [usable: v]", and "Name(id): UNSUPPORTED" for the tool's APIs it does
 *  not. The tool is of the broker's release, so the usable version is the broker's latest. */
function apiLines(era) {
  const text = new Map();
  for (const [id, name, lo, hi] of era.apis) text.set(id, `${name}(${id}): ${lo === hi ? lo : `${lo} to ${hi}`} [usable: ${hi}]`);
  for (const [id, name] of era.unsupported) text.set(id, `${name}(${id}): UNSUPPORTED`);
  return [...text.keys()].sort((a, b) => a - b).map(id => text.get(id));
}

/** kafka-broker-api-versions.sh --bootstrap-server broker-N:9092: for each broker in the metadata
 *  (in id order), the request versions it supports, or ERROR when it does not answer (the
 *  connection drops: DisconnectException). Returns {lines} or {error}. */
export function brokerApiVersions(meta, brokers, { znodes = null, kraft = false, bootstrap = `${hostOf(0)}:${PORT}` } = {}) {
  const era = API_VERSIONS[meta && meta.kafka_version];
  if (!era) return { error: `no ApiVersions table for Kafka ${meta && meta.kafka_version}` };
  const listed = brokers.filter(b => inMetadata(b, znodes, kraft)).sort((a, b) => a.id - b.id);
  const first = brokers.find(b => `${hostOf(b.id)}:${PORT}` === bootstrap);
  if (!first || !answers(first) || !listed.length) {
    // sendAnyNode: no bootstrap broker answered its Metadata request; the bootstrap node has no
    // id yet. The Scala tool (to 3.9) dies with the exception, the Java one (4.x) prints its message
    const node = `${bootstrap} (id: -1 rack: null${era.node_suffix})`;
    return { error: era.node_suffix ? `Request METADATA failed on brokers [${node}]`
      : `Exception in thread "main" java.lang.RuntimeException: Request METADATA failed on brokers List(${node})` };
  }
  const body = apiLines(era);
  const lines = [];
  for (const b of listed) {
    if (!answers(b)) { lines.push(`${nodeText(meta, b.id, era)} -> ERROR: org.apache.kafka.common.errors.DisconnectException`); continue; }
    lines.push(`${nodeText(meta, b.id, era)} -> (`, ...body.map((t, i) => `\t${t}${i < body.length - 1 ? "," : ""}`), ")");
  }
  return { lines };
}

/** kafka-cluster.sh list-endpoints --bootstrap-server ... [--include-fenced-brokers] (4.0+,
 *  ClusterTool.listEndpoints): one line per broker, columns padded as its printf does. */
export function listEndpoints(meta, brokers, includeFenced) {
  const nodes = brokers.filter(b => typeof b.broker_epoch === "number" && b.broker_epoch >= 0 && (includeFenced || !b.fenced))
    .sort((a, b) => a.id - b.id);
  const hostW = nodes.length ? Math.max(...nodes.map(b => hostOf(b.id).length)) : 100;
  const racks = nodes.map(b => rackText(meta, b.id)).filter(r => r !== "null");
  const rackW = racks.length ? Math.max(...racks.map(r => r.length)) : 10;
  const pad = (s, w) => String(s).padEnd(w);
  const row = cols => pad(cols[0], 10) + " " + pad(cols[1], hostW) + " " + pad(cols[2], 10) + " " + pad(cols[3], rackW) + " "
    + pad(cols[4], 10) + " " + pad(cols[5], 15);
  return { lines: [row(["ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE"]),
    ...nodes.map(b => row([b.id, hostOf(b.id), PORT, rackText(meta, b.id), b.fenced ? "fenced" : "unfenced", "broker"]))] };
}

/** Whether kafka-cluster.sh has list-endpoints in this era: ClusterTool has it at 4.1.0, not at 3.9.0. */
export function hasListEndpoints(meta) {
  return Boolean(meta) && meta.kafka_version === "4.1";
}

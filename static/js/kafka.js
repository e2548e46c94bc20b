// The Kafka-native corner: kafka-topics.sh --describe and zookeeper-shell, computed from the state;
// in KRaft eras kafka-metadata-quorum.sh instead of zookeeper-shell (kraft.js).
import { configsField, describeConfigs } from "./configs.js";
import { h } from "./dom.js";
import { elrColumns, topicId, quorumStatus, quorumReplication } from "./kraft.js";
import { brokerApiVersions, hasListEndpoints, listEndpoints } from "./broker_tools.js";
import { t, N_ } from "./i18n.js";

/** `kraft`: against a KRaft broker (3.8+) the header carries the TopicId and every partition line
 *  the Elr and LastKnownElr columns (TopicCommand from 3.8, through DescribeTopicPartitions). */
export function describeTopics(meta, partitions, { topic = null, underReplicated = false, unavailable = false, kraft = false,
                                                  offline = p => p.leader === -1 } = {}) {
  const lines = [];
  const byTopic = new Map();
  for (const p of partitions) {
    if (!byTopic.has(p.topic)) byTopic.set(p.topic, []);
    byTopic.get(p.topic).push(p);
  }
  for (const t of (meta && meta.topics) || []) {
    if (topic !== null && t.name !== topic) continue;
    const parts = (byTopic.get(t.name) || []).slice().sort((a, b) => a.partition - b.partition);
    const filtered = parts.filter(p => (!underReplicated || p.isr.length < p.replicas.length)
                                       && (!unavailable || offline(p)));
    if (!underReplicated && !unavailable) {
      const configs = configsField(meta, t.name);
      const id = kraft ? `\tTopicId: ${topicId(t.name)}` : "";
      lines.push(`Topic: ${t.name}${id}\tPartitionCount: ${t.partitions}\tReplicationFactor: ${t.replication_factor}\tConfigs: ${configs}`);
    }
    for (const p of filtered) {
      const leader = p.leader === -1 ? "none" : String(p.leader);
      lines.push(`\tTopic: ${p.topic}\tPartition: ${p.partition}\tLeader: ${leader}\tReplicas: ${p.replicas.join(",")}\tIsr: ${p.isr.join(",")}${kraft ? elrColumns(p) : ""}`);
    }
  }
  return lines;
}

function normalise(path) {
  if (typeof path !== "string" || !path.startsWith("/")) return null;
  const p = path.replace(/\/+$/, "");
  return p === "" ? "/" : p;
}

export function children(znodes, path) {
  const prefix = path === "/" ? "/" : path + "/";
  const out = [];
  for (const p of znodes.keys()) {
    if (p.startsWith(prefix)) {
      const rest = p.slice(prefix.length);
      if (rest && !rest.includes("/")) out.push(rest);
    }
  }
  return out.sort();
}

export function zkLs(znodes, path) {
  const p = normalise(path);
  if (p === null) return { error: `Path must start with / character` };
  if (p !== "/" && !znodes.has(p)) return { error: `Node does not exist: ${p}` };
  return { lines: [`[${children(znodes, p).join(", ")}]`] };
}

export function zkGet(znodes, path, withStat = true) {
  const p = normalise(path);
  if (p === null) return { error: `Path must start with / character` };
  const node = znodes.get(p);
  if (!node) return { error: `Node does not exist: ${p}` };
  const data = node.data === null || node.data === undefined ? "null" : JSON.stringify(node.data);
  const lines = [data];
  if (withStat) lines.push(...zkStat(znodes, p, node));
  return { lines };
}

export function zkStat(znodes, p, node) {
  const hex = n => "0x" + Number(n || 0).toString(16);
  const data = node.data === null || node.data === undefined ? "" : JSON.stringify(node.data);
  return [`cZxid = ${hex(node.czxid)}`, `mZxid = ${hex(node.mzxid)}`, `dataVersion = ${node.version}`,
          `ephemeralOwner = ${hex(node.ephemeral_owner)}`, `dataLength = ${data.length}`,
          `numChildren = ${children(znodes, p).length}`];
}

const CONFIGS_HELP = ["kafka-configs.sh --describe --entity-type topics|brokers --entity-name N | --entity-default [--all]", ""];
const API_VERSIONS_HELP = ["kafka-broker-api-versions.sh --bootstrap-server broker-0:9092", N_("each broker (with its rack) and its request versions")];
const TOPICS_HELP = ["kafka-topics.sh --describe [--topic T] [--under-replicated-partitions] [--unavailable-partitions]", ""];
/** help's lines as [the command as Kafka's tools take it, what it does (a msgid)]: the corner
 *  prints the first as it is and the second in the page's language (cli.js). */
export const SHELL_HELP = [
  TOPICS_HELP,
  CONFIGS_HELP,
  API_VERSIONS_HELP,
  ["ls <path>       ", N_("list a znode's children (zookeeper-shell)")],
  ["get <path>      ", N_("a znode's data and stat")],
  ["stat <path>     ", N_("a znode's stat")],
  ["clear           ", N_("clear the screen")],
];

export const KRAFT_HELP = [
  TOPICS_HELP,
  CONFIGS_HELP,
  API_VERSIONS_HELP,
  ["kafka-metadata-quorum.sh describe --status       ", N_("the Raft leader, epoch and high watermark")],
  ["kafka-metadata-quorum.sh describe --replication  ", N_("every voter's and broker's metadata log end")],
  ["clear           ", N_("clear the screen")],
];
/** An error the corner writes itself (not a line Kafka's tools print): in the page's language. */
const ours = text => ({ error: text, ours: true });

function metadataQuorum(words, { quorum, brokers, nowMs }) {
  if (!words.includes("describe")) return ours(t("only describe --status / --replication is supported here"));
  if (words.includes("--replication")) return { lines: quorumReplication(quorum, brokers, nowMs) };
  if (words.includes("--status")) return { lines: quorumStatus(quorum, brokers, nowMs) };
  return { error: "One of --status or --replication must be specified with describe sub-command" };
}

/** Run one line; returns {lines} or {error} (or {clear: true}). `quorum` is set in KRaft eras. */
export function runShell(line, { meta, partitions, znodes, quorum = null, brokers = [], offline = undefined, nowMs = 0 }) {
  const words = line.trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { lines: [] };
  let cmd = words[0];
  if (cmd === "help") {
    const endpoints = hasListEndpoints(meta) ? [["kafka-cluster.sh list-endpoints --bootstrap-server broker-0:9092 [--include-fenced-brokers]", ""]] : [];
    return { help: [...(quorum ? KRAFT_HELP : SHELL_HELP), ...endpoints] };
  }
  if (cmd === "clear") return { clear: true };
  if (quorum) {
    if (cmd === "kafka-metadata-quorum.sh" || cmd === "kafka-metadata-quorum") return metadataQuorum(words, { quorum, brokers, nowMs });
    if (["zookeeper-shell.sh", "zkCli.sh", "ls", "get", "stat"].includes(cmd)) return ours(t("There is no ZooKeeper in KRaft mode: the cluster's metadata is the controllers' Raft log (try kafka-metadata-quorum.sh describe --status)"));
  } else if (cmd.startsWith("kafka-metadata-quorum")) {
    return ours(t("kafka-metadata-quorum.sh needs a KRaft cluster: this era runs on ZooKeeper (try ls /controller)"));
  }
  if (cmd === "zookeeper-shell.sh" || cmd === "zkCli.sh") { words.splice(0, words[1] && words[1].includes(":") ? 2 : 1); cmd = words[0]; }
  if (cmd === "ls") return zkLs(znodes, words[1] || "/");
  if (cmd === "get") return zkGet(znodes, words.filter(w => w !== "-s")[1] || "");
  if (cmd === "stat") {
    const p = normalise(words[1] || "");
    const node = p && znodes.get(p);
    return node ? { lines: zkStat(znodes, p, node) } : { error: `Node does not exist: ${words[1] || ""}` };
  }
  if (cmd === "kafka-configs.sh" || cmd === "kafka-configs") return describeConfigs(words, meta);
  if (cmd === "kafka-broker-api-versions.sh" || cmd === "kafka-broker-api-versions") {
    const at = words.indexOf("--bootstrap-server");
    if (at < 0 || !words[at + 1]) return { error: "Missing required argument \"[bootstrap-server]\"" };
    return brokerApiVersions(meta, brokers, { znodes, kraft: Boolean(quorum), bootstrap: words[at + 1] });
  }
  if ((cmd === "kafka-cluster.sh" || cmd === "kafka-cluster") && hasListEndpoints(meta)) {
    if (words[1] !== "list-endpoints") return ours(t("only list-endpoints --bootstrap-server broker-0:9092 is supported here"));
    return listEndpoints(meta, brokers, words.includes("--include-fenced-brokers"));
  }
  if (cmd === "kafka-topics.sh" || cmd === "kafka-topics") {
    if (!words.includes("--describe")) return ours(t("only --describe is supported here"));
    const ti = words.indexOf("--topic");
    const topic = ti >= 0 ? words[ti + 1] : null;
    if (topic !== null && !((meta && meta.topics) || []).some(t => t.name === topic)) {
      return { error: `Error while executing topic command : Topic '${topic}' does not exist as expected` };
    }
    return { lines: describeTopics(meta, partitions, { topic, underReplicated: words.includes("--under-replicated-partitions"),
                                                       unavailable: words.includes("--unavailable-partitions"), kraft: Boolean(quorum), offline }) };
  }
  return ours(t("unknown command: {cmd} (try help)", { cmd }));
}

/** An era as a drop-down option ("2.7 · AlterIsr"), the rules that distinguish it as its tooltip
 *  (notes from /api/eras, docs/scenario-format.md §4). */
export function eraOption(v, note) {
  return h("option", { value: v, text: note ? `${v} · ${note.short}` : v, title: note ? t("rules of {rules}: {text}", { rules: note.rules_of, text: note.text }) : "" });
}

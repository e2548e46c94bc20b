// Where a topic's or broker's config value comes from, as Kafka's DescribeConfigs names it, and
// what kafka-configs.sh --describe and the Configs: field of kafka-topics.sh --describe print.
// The simulator has three layers: a topic's own override (DYNAMIC_TOPIC_CONFIG, set with
// kafka-configs.sh --alter), the brokers' server.properties (STATIC_BROKER_CONFIG: the scenario's
// config) and the era's default (DEFAULT_CONFIG); it has no dynamic broker configs. Pure functions
// of the frame's meta; no DOM.
import { kafkaDigits } from "./format.js";
import { t } from "./i18n.js";

// the sim's topic-level keys (engine/eras.py CONFIG, scope "topic"), by their broker name, with
// the topic config's own name where Kafka's differs
const TOPIC_NAME = { "min.insync.replicas": "min.insync.replicas", "unclean.leader.election.enable": "unclean.leader.election.enable",
  "log.flush.interval.messages": "flush.messages", "log.flush.interval.ms": "flush.ms" };

/** Whether the era's tools still talk to ZooKeeper (kafka-topics.sh gained --bootstrap-server in
 *  2.2): they read a topic's overrides from /config/topics and print nothing else. */
export function zookeeperTools(meta) {
  return Boolean(meta) && !meta.kraft && ["0.10", "1.1", "2.0", "2.0.1"].includes(meta.kafka_version);
}

const show = v => (typeof v === "number" ? kafkaDigits(v) : String(v));     // Long.MAX_VALUE as Kafka prints it

/** One config entry: {name, value, source, synonyms: [[source, name, value]...]}, the synonyms
 *  from the most to the least specific, as DescribeConfigs returns them. */
function entry(name, layers) {
  const synonyms = layers.filter(l => l[2] !== null && l[2] !== undefined);
  if (!synonyms.length) return null;
  return { name, value: synonyms[0][2], source: synonyms[0][0], synonyms };
}

/** A topic's configs, sorted by name (DescribeConfigs of a TOPIC resource). */
export function topicConfigs(meta, topic) {
  const t = ((meta && meta.topics) || []).find(x => x.name === topic);
  if (!t) return [];
  const statics = meta.static_config || {}, defaults = meta.config_defaults || {};
  const out = [];
  for (const [key, name] of Object.entries(TOPIC_NAME)) {
    if (meta.config && !(key in meta.config)) continue;      // a key the era does not know
    const e = entry(name, [["DYNAMIC_TOPIC_CONFIG", name, (t.config || {})[key]], ["STATIC_BROKER_CONFIG", key, statics[key]],
      ["DEFAULT_CONFIG", key, defaults[key]]]);
    if (e) out.push(e);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** A broker's configs (every broker has the same server.properties here, but for its broker.rack:
 *  a static, read-only config of its own when the run has racks, docs/model.md §21), by name. */
export function brokerConfigs(meta, broker = null) {
  const statics = meta.static_config || {}, defaults = meta.config_defaults || {};
  const out = Object.keys(defaults).map(key => entry(key, [["STATIC_BROKER_CONFIG", key, statics[key]],
    ["DEFAULT_CONFIG", key, defaults[key]]])).filter(Boolean);
  const rack = broker !== null && meta.racks ? meta.racks[String(broker)] : undefined;
  if (rack !== undefined) out.push(entry("broker.rack", [["STATIC_BROKER_CONFIG", "broker.rack", rack]]));
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The Configs: field of kafka-topics.sh --describe: what is not a default (ConfigEntry.isDefault),
 *  or with the ZooKeeper tools only the topic's overrides. */
export function configsField(meta, topic) {
  const keep = zookeeperTools(meta) ? e => e.source === "DYNAMIC_TOPIC_CONFIG" : e => e.source !== "DEFAULT_CONFIG";
  return topicConfigs(meta, topic).filter(keep).map(e => `${e.name}=${show(e.value)}`).join(",");
}

function line(e) {
  const syn = e.synonyms.map(([src, name, v]) => `${src}:${name}=${show(v)}`).join(", ");
  return `  ${e.name}=${show(e.value)} sensitive=false synonyms={${syn}}`;
}

function flag(words, name) {
  const i = words.indexOf(name);
  return i >= 0 ? words[i + 1] : undefined;
}

/** `kafka-configs.sh --describe`: --entity-type topics|brokers with --entity-name or
 *  --entity-default, and --all (ConfigCommand, 2.2+: only the entity's dynamic configs unless
 *  --all; the ZooKeeper tools print the znode's overrides on one line). Returns {lines} or {error}. */
export function describeConfigs(words, meta) {
  if (!words.includes("--describe")) return { error: t("only --describe is supported here (the config editor alters topic configs)"), ours: true };
  const type = flag(words, "--entity-type");
  const name = flag(words, "--entity-name");
  const dflt = words.includes("--entity-default");
  const all = words.includes("--all");
  if (type !== "topics" && type !== "brokers") return { error: t("--entity-type must be topics or brokers here"), ours: true };
  if (type === "topics" && (name === undefined || dflt)) return { error: t("--entity-name <topic> is required for --entity-type topics here"), ours: true };
  if (type === "brokers" && name === undefined && !dflt) return { error: t("--entity-name <broker id> or --entity-default is required for --entity-type brokers here"), ours: true };
  const zk = zookeeperTools(meta);
  if (type === "topics") {
    if (!meta.topics.some(t => t.name === name)) return { error: `The topic '${name}' doesn't exist and doesn't have dynamic config.` };
    const entries = topicConfigs(meta, name).filter(e => all || e.source === "DYNAMIC_TOPIC_CONFIG");
    if (zk) return { lines: [`Configs for topic '${name}' are ${entries.filter(e => e.source === "DYNAMIC_TOPIC_CONFIG").map(e => `${e.name}=${show(e.value)}`).join(",")}`] };
    return { lines: [`${all ? "All" : "Dynamic"} configs for topic ${name} are:`, ...entries.map(line)] };
  }
  if (!dflt && !meta.brokers.includes(Number(name))) return { error: `The broker '${name}' doesn't exist and doesn't have dynamic config.` };
  // no dynamic broker configs in the simulator: a plain describe lists none, --all the static ones
  if (zk) return { lines: [`Configs for brokers '${dflt ? "<default>" : name}' are `] };
  if (dflt) return { lines: ["Default configs for brokers in the cluster are:"] };
  return { lines: [`${all ? "All" : "Dynamic"} configs for broker ${name} are:`, ...(all ? brokerConfigs(meta, Number(name)).map(line) : [])] };
}

// The Kafka-native corner: kafka-topics.sh --describe, live, and a zookeeper-shell to browse znodes
// (in KRaft eras kafka-metadata-quorum.sh instead: there are no znodes); with racks, the tools that
// print them (kafka-broker-api-versions.sh, kafka-cluster.sh list-endpoints from 4.0).
import { h, setText } from "../dom.js";
import { describeTopics, runShell } from "../kafka.js";
import { sortedPartitions, sortedBrokers } from "../store.js";
import { isKraft } from "../kraft.js";
import { isOffline } from "../health.js";
import { zookeeperTools } from "../configs.js";
import { hasListEndpoints } from "../broker_tools.js";
import { hasZones } from "../zones.js";
import { t, known } from "../i18n.js";

const PRESETS = ["kafka-topics.sh --describe", "kafka-topics.sh --describe --under-replicated-partitions",
  "kafka-configs.sh --describe --entity-type topics --entity-name orders", "ls /brokers/ids", "get /controller", "ls /isr_change_notification", "get /brokers/topics/orders/partitions/0/state"];
const KRAFT_PRESETS = ["kafka-topics.sh --describe", "kafka-topics.sh --describe --under-replicated-partitions",
  "kafka-configs.sh --describe --entity-type topics --entity-name orders",
  "kafka-metadata-quorum.sh describe --status", "kafka-metadata-quorum.sh describe --replication"];
const LIVE_ZK = "$ kafka-topics.sh --zookeeper zk:2181 --describe";
// from 2.2 the tool asks a broker (DescribeConfigs): Configs: lists server.properties values too
const LIVE_BOOTSTRAP = "$ kafka-topics.sh --bootstrap-server broker:9092 --describe";
const LIVE_KRAFT = LIVE_BOOTSTRAP;
const ZK_PLACEHOLDER = "ls /brokers/ids · get /controller · kafka-topics.sh --describe --topic orders · help";
const KRAFT_PLACEHOLDER = "kafka-metadata-quorum.sh describe --status · kafka-topics.sh --describe · help";
// with racks (docs/model.md §21): the tools that print them, where a broker is printed as a node
const API_VERSIONS = "kafka-broker-api-versions.sh --bootstrap-server broker-0:9092";
const LIST_ENDPOINTS = "kafka-cluster.sh list-endpoints --bootstrap-server broker-0:9092";

/** Where the racks on screen come from, and which of Kafka's tools print them in this era. */
function rackNote(meta, kraft) {
  const tools = ["kafka-broker-api-versions.sh", "kafka-configs.sh … --entity-type brokers --all"];
  if (!kraft) tools.push("get /brokers/ids/N");
  if (hasListEndpoints(meta)) tools.push("kafka-cluster.sh list-endpoints");
  return t("Zones are each broker's broker.rack (server.properties), shown by {tools}; kafka-topics.sh --describe shows none.",
    { tools: tools.join(", ") });
}

export function createCli(app) {
  const panel = document.getElementById("panel-cli");
  const describe = h("div.describe.kafka#describe", { title: t("kafka-topics.sh --describe, refreshed live (from the partition state znodes)") });
  const out = h("div.cli-out#cli-out", { role: "log" });
  const input = h("input#cli-input", { type: "text", placeholder: ZK_PLACEHOLDER, "aria-label": t("a command for the Kafka CLI corner"),
    autocomplete: "off", spellcheck: false });
  const history = [];
  let hpos = 0;
  const presets = h("div.presets");
  // the command as Kafka's tool takes it, then our word that it is refreshed live
  const liveLine = h("div.small.dim.cli-live", null, h("span.kafka"), " ", h("span", { text: t("(live)") }));
  const racksLine = h("div.small.dim.rack-note", { hidden: true });
  panel.append(liveLine, describe, racksLine, presets, out,
    h("div.cli-in", null, h("span.mono.dim", { text: "$" }), input,
      h("button", { type: "button", text: t("Run"), onclick: () => exec(input.value) })));

  // a line Kafka's tools print stays as they print it (class kafka); the corner's own words are
  // in the page's language
  function print(text, cls) { show(h("div" + (cls ? "." + cls : ""), { text })); }
  function show(el) { out.appendChild(el); out.scrollTop = out.scrollHeight; }
  /** help: each command as the tool takes it, then what it does in the page's language */
  function printHelp(rows) {
    show(h("div.help", null, ...rows.flatMap(([cmd, what], i) => [i ? "\n" : "", h("span.kafka", { text: cmd }),
      what ? h("span", { text: "  " + known(what) }) : ""])));
  }

  function exec(line) {
    line = line.trim();
    if (!line) return;
    history.push(line); hpos = history.length;
    input.value = "";
    print("$ " + line, "cmd");
    const s = app.store;
    const res = runShell(line, { meta: s.meta, partitions: sortedPartitions(s), znodes: s.znodes, quorum: s.quorum,
      brokers: sortedBrokers(s), offline: p => isOffline(s, p), nowMs: s.clock ? s.clock.t_ms : 0 });
    if (res.clear) { out.replaceChildren(); return; }
    if (res.help) printHelp(res.help);
    else if (res.error) print(res.error, res.ours ? "err" : "err.kafka");
    else if (res.lines.length) print(res.lines.join("\n"), "kafka");
    else print(t("(no output)"), "dim");
  }

  input.addEventListener("keydown", e => {
    if (e.key === "Enter") exec(input.value);
    else if (e.key === "ArrowUp" && hpos > 0) { input.value = history[--hpos]; e.preventDefault(); }
    else if (e.key === "ArrowDown") { hpos = Math.min(history.length, hpos + 1); input.value = history[hpos] || ""; e.preventDefault(); }
  });

  // what was typed belongs to the run it was typed in: a new scenario or era starts a clean shell
  let run = null, mode = null;
  function render(store) {
    if (!store.meta) return;
    if (store.run !== run) { if (run !== null) out.replaceChildren(); run = store.run; }
    const kraft = isKraft(store);
    const zones = hasZones(store);
    const wanted = `${kraft}|${zones}|${store.meta.kafka_version}`;
    if (mode !== wanted) {      // the tools of the era: zookeeper-shell or kafka-metadata-quorum.sh
      mode = wanted;
      const extra = zones ? [API_VERSIONS, ...(hasListEndpoints(store.meta) ? [LIST_ENDPOINTS] : [])] : [];
      presets.replaceChildren(...[...(kraft ? KRAFT_PRESETS : PRESETS), ...extra].map(p => h("button.small", { type: "button", text: p, onclick: () => exec(p) })));
      racksLine.hidden = !zones;
      setText(racksLine, zones ? rackNote(store.meta, kraft) : "");
    }
    if (liveLine.__era !== store.meta.kafka_version) {
      liveLine.__era = store.meta.kafka_version;
      setText(liveLine.firstChild, kraft ? LIVE_KRAFT : zookeeperTools(store.meta) ? LIVE_ZK : LIVE_BOOTSTRAP);
      input.placeholder = kraft ? KRAFT_PLACEHOLDER : ZK_PLACEHOLDER;
      describe.title = kraft ? t("kafka-topics.sh --describe, refreshed live (from the metadata the brokers hold)")
        : t("kafka-topics.sh --describe, refreshed live (from the partition state znodes)");
    }
    setText(describe, describeTopics(store.meta, sortedPartitions(store), { kraft }).join("\n"));
  }
  return { render, exec };
}

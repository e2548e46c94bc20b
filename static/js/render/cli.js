// The Kafka-native corner: kafka-topics.sh --describe, live, and a zookeeper-shell to browse znodes.
import { h, setText } from "../dom.js";
import { describeTopics, runShell } from "../kafka.js";
import { sortedPartitions } from "../store.js";

const PRESETS = ["kafka-topics.sh --describe", "kafka-topics.sh --describe --under-replicated-partitions",
  "ls /brokers/ids", "get /controller", "ls /isr_change_notification", "get /brokers/topics/orders/partitions/0/state"];

export function createCli(app) {
  const panel = document.getElementById("panel-cli");
  const describe = h("div.describe#describe", { title: "kafka-topics.sh --describe, refreshed live (from the partition state znodes)" });
  const out = h("div.cli-out#cli-out", { role: "log" });
  const input = h("input#cli-input", { type: "text", placeholder: "ls /brokers/ids · get /controller · kafka-topics.sh --describe --topic orders · help",
    autocomplete: "off", spellcheck: false });
  const history = [];
  let hpos = 0;
  const presets = h("div.presets", null, ...PRESETS.map(p => h("button.small", { type: "button", text: p, onclick: () => exec(p) })));
  panel.append(h("div.small.dim", { text: "$ kafka-topics.sh --zookeeper zk:2181 --describe   (live)" }), describe, presets, out,
    h("div.cli-in", null, h("span.mono.dim", { text: "$" }), input,
      h("button", { type: "button", text: "Run", onclick: () => exec(input.value) })));

  function print(text, cls) { out.appendChild(h("div" + (cls ? "." + cls : ""), { text })); out.scrollTop = out.scrollHeight; }

  function exec(line) {
    line = line.trim();
    if (!line) return;
    history.push(line); hpos = history.length;
    input.value = "";
    print("$ " + line, "cmd");
    const s = app.store;
    const res = runShell(line, { meta: s.meta, partitions: sortedPartitions(s), znodes: s.znodes });
    if (res.clear) { out.replaceChildren(); return; }
    if (res.error) print(res.error, "err");
    else print(res.lines.join("\n") || "(no output)");
  }

  input.addEventListener("keydown", e => {
    if (e.key === "Enter") exec(input.value);
    else if (e.key === "ArrowUp" && hpos > 0) { input.value = history[--hpos]; e.preventDefault(); }
    else if (e.key === "ArrowDown") { hpos = Math.min(history.length, hpos + 1); input.value = history[hpos] || ""; e.preventDefault(); }
  });

  // what was typed belongs to the run it was typed in: a new scenario or era starts a clean shell
  let run = null;
  function render(store) {
    if (!store.meta) return;
    if (store.run !== run) { if (run !== null) out.replaceChildren(); run = store.run; }
    setText(describe, describeTopics(store.meta, sortedPartitions(store)).join("\n"));
  }
  return { render, exec };
}

// Producers and consumers: send records with chosen acks, start and stop consumers, and the
// ledger of what happened to each record (acked, failed with the Kafka error, lost).
import { h, clear, setText, reconcile } from "../dom.js";
import { createLedger } from "./ledger.js";
import { kafkaNumber } from "../format.js";
import { t } from "../i18n.js";

/** A producer's effective settings as one line (what the engine's producer really does). */
export function producerSettings(p) {
  const parts = [`acks=${p.acks}`];
  if (p.acks_config && p.acks_config !== p.acks) parts.push(t("(config acks={acks}; sends chose their own)", { acks: p.acks_config }));
  parts.push(`enable.idempotence=${p.idempotence ? "true" : "false"}`);
  if (p.retries !== null && p.retries !== undefined) parts.push(`retries=${kafkaNumber(p.retries)}`);
  if (p.max_in_flight) parts.push(`max.in.flight.requests.per.connection=${p.max_in_flight}`);
  if (p.delivery_timeout_ms) parts.push(`delivery.timeout.ms=${p.delivery_timeout_ms}`);
  return parts.join("  ");
}

// (the function that fills the partition list names its topic t)
const ANY_PARTITION = t("any (partitioner)");

/** Where a consumer with client.rack reads each partition (KIP-392 follower fetching), one entry
 * per partition: "reads orders-0 from b1 (follower, rack az-b)". Empty for a consumer without a
 * rack: it always reads from the leader. */
export function readsLines(c) {
  if (!c.reads) return [];
  return Object.entries(c.reads).map(([key, r]) => r.rack
    ? t("reads {key} from b{broker} ({role}, rack {rack})", { key, broker: r.broker, role: r.role, rack: r.rack })
    : t("reads {key} from b{broker} ({role})", { key, broker: r.broker, role: r.role }));
}

export function createClients(app) {
  const panel = document.getElementById("panel-clients");
  const count = document.getElementById("tab-count-clients");

  // -- produce form
  const topicSel = h("select", { "aria-label": t("topic") });
  const partSel = h("select", { "aria-label": t("partition") });
  const countIn = h("input", { type: "number", min: 1, max: 5000, value: 5, "aria-label": t("records") });
  const acksSel = h("select", { "aria-label": "acks" }, ...["all", "1", "0"].map(a => h("option", { value: a, text: a })));
  const nameIn = h("input", { type: "text", value: "console", size: 9, "aria-label": t("producer name") });
  const produceBtn = h("button.primary", { type: "button", text: t("Produce"), id: "produce-button",
    onclick: () => {
      const op = { op: "produce", topic: topicSel.value, count: Number(countIn.value), acks: acksSel.value, producer: nameIn.value.trim() };
      if (partSel.value !== "") op.partition = Number(partSel.value);
      app.command(op, t("produce {n} record(s) with acks={acks}", { n: op.count, acks: op.acks }));
    } });
  topicSel.addEventListener("change", () => fillPartitions(app.store));
  const produceForm = h("div.form#produce-form", null, h("label", null, t("topic"), topicSel), h("label", null, t("partition"), partSel),
    h("label", null, t("records"), countIn), h("label", null, "acks", acksSel), h("label", null, t("producer"), nameIn), produceBtn);

  // -- consume form
  const cName = h("input", { type: "text", value: "c1", size: 6, "aria-label": t("consumer name") });
  const cTopic = h("select", { "aria-label": t("consumer topic") });
  const cFrom = h("select", { "aria-label": t("from") }, h("option", { value: "earliest", text: "earliest" }), h("option", { value: "latest", text: "latest" }));
  const cIso = h("select", { "aria-label": "isolation.level" }, h("option", { value: "", text: t("default isolation") }),
    h("option", { value: "read_uncommitted", text: "read_uncommitted" }), h("option", { value: "read_committed", text: "read_committed" }));
  const consumeBtn = h("button", { type: "button", text: t("Start consumer"), onclick: () => {
    const op = { op: "consume", consumer: cName.value.trim(), topic: cTopic.value, from: cFrom.value };
    if (cIso.value) op["isolation.level"] = cIso.value;
    app.command(op, t("start consumer {name}", { name: op.consumer }));
  } });
  const consumeForm = h("div.form", null, h("label", null, t("name"), cName), h("label", null, t("topic"), cTopic), cFrom, cIso, consumeBtn);

  const countsEl = h("div.counts");
  const producers = h("tbody");
  const consumers = h("tbody");
  const ledger = createLedger(app);
  const lostEl = h("div.small");
  panel.append(
    h("h3", { text: t("Send records") }), produceForm,
    h("h3", { text: t("Outcomes") }), countsEl,
    h("h3", { text: t("Producers") }),
    h("table.grid", null, h("thead", null, h("tr", null, ...[[t("producer")], [t("topic")], ["acks", t("the acks its requests carry")],
      [t("rate"), t("records per second")], [t("sent")], [t("acked")], [t("failed")], [t("lost")], [""]].map(([text, title]) => h("th", { text, title: title || text })))), producers),
    h("h3", { text: t("Consumers") }), consumeForm,
    h("table.grid", null, h("thead", null, h("tr", null, ...[t("consumer"), t("topic"), t("positions (lag = HW − position)"), t("read"), ""].map(x => h("th", { text: x })))), consumers),
    h("h3", { text: t("Record ledger") }), ledger.el,
    h("h3", { text: t("Lost acknowledged records") }), lostEl);

  let topicsKey = "";
  function fillTopics(store) {
    const names = store.meta.topics.map(t => t.name);
    const key = names.join("\u0000");
    if (key === topicsKey) return;
    topicsKey = key;
    for (const sel of [topicSel, cTopic]) {
      const keep = sel.value;
      sel.replaceChildren(...names.map(n => h("option", { value: n, text: n })));
      if (names.includes(keep)) sel.value = keep;
    }
    fillPartitions(store);
  }
  function fillPartitions(store) {
    const t = store.meta && store.meta.topics.find(x => x.name === topicSel.value);
    const keep = partSel.value;
    partSel.replaceChildren(h("option", { value: "", text: ANY_PARTITION }),
      ...Array.from({ length: t ? t.partitions : 0 }, (_, i) => h("option", { value: String(i), text: String(i) })));
    partSel.value = keep;
  }

  // the tab's badge follows every frame, shown or not: a new run (restart, era switch) clears it
  function renderCount(store) {
    const lost = store.records ? store.records.lost : 0;
    setText(count, lost ? t("{n} lost", { n: lost }) : "");
    count.className = "count" + (lost ? " bad" : "");
  }

  function render(store, changes) {
    renderCount(store);
    if (!store.meta) return;
    if (changes.flags.meta || changes.flags.reset) fillTopics(store);
    const anyClient = Array.from(changes.changed).some(k => k.startsWith("c:"));
    if (!changes.flags.records && !anyClient && !changes.flags.reset && !changes.flags.highlight) return;
    const r = store.records || { errors: {}, by_producer: {}, lost_ids: [] };
    const chips = [[t("acked"), r.acked, "ok"], [t("failed"), r.failed, r.failed ? "bad" : ""], [t("pending"), r.pending, ""],
      [t("unacknowledged (acks=0)"), r.unacknowledged, "info"], [t("LOST"), r.lost, r.lost ? "bad" : ""]];
    const errs = Object.entries(r.errors || {}).map(([e, n]) => [`${e}`, n, "warn"]);
    const text = JSON.stringify([chips, errs, r.lost_acks_all]);
    if (countsEl.__text !== text) {
      countsEl.__text = text;
      // replaceChildren prints a null as the text "null" ("LOST 0 null"): only elements go in
      const extra = r.lost ? [h("span.chip.bad", { text: t("acks=all lost {n}", { n: r.lost_acks_all }), title: t("acked with acks=all and gone: a durability violation") })] : [];
      countsEl.replaceChildren(...chips.map(([l, n, k]) => h("span.chip" + (k ? "." + k : ""), { text: `${l} ${n || 0}` })),
        ...errs.map(([l, n, k]) => h("span.chip." + k, { text: `${l} × ${n}`, title: t("failed records by Kafka error") })), ...extra);
    }
    const prods = [], cons = [];
    for (const [name, c] of store.clients) (c.type === "producer" ? prods : cons).push({ name, ...c });
    reconcile(producers, prods, p => p.name, () => h("tr"), (tr, p) => {
      const s = r.by_producer[p.name] || {};
      const cells = [p.name, p.topic || "–", p.acks + (p.acks_config && p.acks_config !== p.acks ? t(" (config {acks})", { acks: p.acks_config }) : ""), p.rate_per_s ? `${p.rate_per_s}/s` : "–", p.sent, s.acked || 0, s.failed || 0, s.lost || 0];
      const settings = producerSettings(p);
      const key = JSON.stringify([cells, p.running, settings]);
      if (tr.__k === key) return;
      tr.__k = key;
      tr.title = settings;
      tr.dataset.settings = settings;
      tr.replaceChildren(...cells.map(c => h("td", { text: String(c) })),
        h("td", null, p.running ? h("button.small", { type: "button", text: t("stop"), onclick: () => app.command({ op: "stop_client", client: p.name }, t("stop {name}", { name: p.name })) }) : h("span.dim", { text: t("stopped") })));
    });
    reconcile(consumers, cons, c => c.name, () => h("tr"), (tr, c) => {
      const pos = Object.entries(c.positions || {}).map(([key, off]) => {
        const p = store.partitions.get(key);
        const leader = p && p.replica_state.find(x => x.broker === p.leader);
        const lag = leader ? Math.max(0, leader.hw - off) : null;
        return `${key}@${off}${lag === null ? "" : ` (lag ${lag})`}`;
      }).join("  ");
      const reads = readsLines(c);
      const key = JSON.stringify([c.name, c.topic, pos, c.read, c.running, c.error, c.rack, reads]);
      if (tr.__k === key) return;
      tr.__k = key;
      const readsEl = reads.length ? h("div.small.consumer-reads", { title: t("client.rack {rack}: the leader's replica.selector.class picks the replica", { rack: c.rack }), text: reads.join("  ") }) : null;
      const nameCell = c.rack ? h("td", null, c.name, h("div.small.dim", { text: t("rack {rack}", { rack: c.rack }), title: "client.rack" })) : h("td", { text: c.name });
      tr.replaceChildren(nameCell, h("td", { text: c.topic || "–" }),
        h("td", { style: { whiteSpace: "normal" } }, pos + (c.error ? `  ${c.error}` : ""), ...(readsEl ? [readsEl] : [])), h("td", { text: String(c.read) }),
        h("td", null, c.running ? h("button.small", { type: "button", text: t("stop"), onclick: () => app.command({ op: "stop_client", client: c.name }, t("stop {name}", { name: c.name })) }) : h("span.dim", { text: t("stopped") })));
    });
    ledger.render(store);
    const lost = r.lost_ids || [];
    const lostKey = lost.join(",");
    if (lostEl.__k !== lostKey) {
      lostEl.__k = lostKey;
      clear(lostEl);
      if (!lost.length) lostEl.append(h("span.dim", { text: t("none so far") }));
      else lostEl.append(h("div.dim", { text: (lost.length < r.lost ? t("{n} record(s) acknowledged to a producer are not in the leader's log (newest shown):", { n: r.lost })
        : t("{n} record(s) acknowledged to a producer are not in the leader's log:", { n: r.lost })) }),
        h("div.mono", { text: lost.join(" ") }));
    }
  }

  return { render, renderCount };
}

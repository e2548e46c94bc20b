// The "Import from kafka-topics.sh --describe" section of the New cluster form: paste the output of
// Kafka's tools, the server reads it (POST /api/import/describe, engine/scenario/import_cluster.py)
// into a scenario and notes on what it could not keep; the notes show beside the box, then the
// run starts from that cluster with the form's era, clients, duration and seed. A line the server
// cannot read shows beside the box, naming the line.
import { h } from "../dom.js";
import { postJSON } from "../http.js";
import { t } from "../i18n.js";

const PLACEHOLDER = "Topic: orders\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n"
  + "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n…";

/** `form()` gives {kafka_version, name, seed, duration_ms, config, clients(topic)} from the form. */
export function importSection(app, dlg, form) {
  const describe = h("textarea.mono#nc-import-describe", { spellcheck: false, rows: 8, placeholder: PLACEHOLDER,
    "aria-label": t("output of kafka-topics.sh --describe") });
  const brokers = h("textarea.mono#nc-import-brokers", { spellcheck: false, rows: 3,
    placeholder: "kafka-1:9092 (id: 1 rack: az-a) -> (\n\tProduce(0): 0 to 9 [usable: 9],\n…",
    "aria-label": t("output of kafka-broker-api-versions.sh") });
  const quorum = h("textarea.mono#nc-import-quorum", { spellcheck: false, rows: 3,
    placeholder: "LeaderId:               3000\nCurrentVoters:          [3000,3001,3002]\n…",
    "aria-label": t("output of kafka-metadata-quorum.sh describe --status") });
  const errorEl = h("div.err-text.small#nc-import-error", { role: "alert" });
  const summary = h("div.small#nc-import-summary");
  const notes = h("ul.small.import-notes#nc-import-notes");
  const start = h("button.primary#nc-import-start", { type: "button", text: t("Start this cluster"), hidden: true });
  let imported = null;

  const reset = () => { imported = null; start.hidden = true; summary.textContent = ""; notes.replaceChildren(); };
  for (const el of [describe, brokers, quorum]) el.addEventListener("input", reset);
  const fail = message => {
    errorEl.textContent = message;
    describe.classList.add("invalid");
    describe.setAttribute("aria-invalid", "true");
  };
  const read = async () => {
    errorEl.textContent = "";
    describe.classList.remove("invalid");
    describe.removeAttribute("aria-invalid");
    reset();
    if (!describe.value.trim()) { fail(t("Paste the output of kafka-topics.sh --describe first")); return null; }
    const f = form();
    const reply = await postJSON("/api/import/describe", { describe: describe.value, api_versions: brokers.value || null,
      quorum: quorum.value || null, kafka_version: f.kafka_version, name: f.name });
    if (!reply.ok) { fail(importMessage(reply.error)); return null; }
    imported = reply;
    const s = reply.scenario, n = reply.summary;
    const ids = s.brokers.length > 8 ? `${s.brokers.slice(0, 8).join(", ")}, …` : s.brokers.join(", ");
    summary.textContent = [
      n.brokers === 1 ? t("1 broker ({ids})", { ids }) : t("{n} brokers ({ids})", { n: n.brokers, ids }),
      n.topics === 1 ? t("1 topic") : t("{n} topics", { n: n.topics }),
      n.partitions === 1 ? t("1 partition") : t("{n} partitions", { n: n.partitions }),
    ].join(", ") + ` · kafka_version ${s.kafka_version}`
      + (reply.notes.length ? " · " + (reply.notes.length === 1 ? t("1 note:") : t("{n} notes:", { n: reply.notes.length }))
        : " · " + t("nothing left out"));
    notes.replaceChildren(...reply.notes.map(text => h("li", { text })));
    start.hidden = false;
    return reply;
  };
  start.addEventListener("click", async () => {
    // the era may have changed since the cluster was read: read it again in the era shown now
    const reply = imported && imported.scenario.kafka_version === form().kafka_version ? imported : await read();
    if (!reply) return;
    const f = form();
    const s = reply.scenario;
    const doc = { ...s, name: f.name || s.name, seed: f.seed, duration_ms: f.duration_ms,
      config: { ...f.config, ...(s.config || {}) }, clients: f.clients(s.topics[0].name), timeline: [] };
    const loaded = await app.load({ scenario: doc }, true);
    if (loaded && loaded.ok) dlg.close();
    else if (loaded) fail(importMessage(loaded.error));
  });
  return h("details.import-cluster#nc-import", null,
    h("summary", { text: t("Import from kafka-topics.sh --describe") }),
    h("p.dim.small", { text: t("Paste what kafka-topics.sh --describe prints: the cluster's brokers, topics and replica assignments become the run's, in the kafka_version chosen below, with the producer, consumer, duration and seed of this form. Leaders and ISRs start healthy; what the run cannot keep is listed before it starts.") }),
    describe,
    h("details.import-more", null, h("summary.small", { text: t("optional: broker racks and KRaft voters") }),
      h("label.small", { text: t("kafka-broker-api-versions.sh (broker ids and racks)") }), brokers,
      h("label.small", { text: t("kafka-metadata-quorum.sh describe --status (KRaft voters)") }), quorum),
    errorEl,
    h("div.form", null, h("button#nc-import-read", { type: "button", text: t("Import"), onclick: read }), start),
    summary, notes);
}

/** The server's refusal in words: the line it names first ("describe line 7: ..."). */
function importMessage(err) {
  if (!err) return t("The server refused the import");
  const where = err.field ? `${err.field}: ` : "";
  return where + (err.message || t("is not valid")) + (err.allowed ? " " + t("(allowed: {allowed})", { allowed: err.allowed }) : "");
}

// The "New cluster" form of the scenario picker: its fields, the scenario document built from
// them, and its errors. Every error shows beside its field, in words, with the field
// highlighted: the page checks what it can itself (brokers, topics, durations) so that all of them
// show at once; the server's own answer (one ScenarioError, named by its field path such as
// topics[0].replication_factor) is put beside the field that path names.
import { h } from "../dom.js";
import { eraOption } from "../kafka.js";
import { clearFieldErrors, showFieldError } from "../fielderrors.js";
import { importSection } from "./importcluster.js";
import { t, t as tr } from "../i18n.js";      // tr: where a topic is named t (babel.cfg extracts both)

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;      // engine/scenario/fields.py TOPIC_NAME
const isInt = v => Number.isInteger(v);

/** Every error of the form's document that the page can tell, as [{field, message}] in words;
 *  `field` is the document's path, as the server names it. */
export function checkCluster(doc, limits) {
  const errors = [];
  const add = (field, message) => errors.push({ field, message });
  const brokers = doc.brokers;
  const brokersOk = isInt(brokers) && brokers >= 1 && brokers <= limits.MAX_BROKERS;
  if (!brokersOk) add("brokers", t("Brokers: {value} is not a whole number from 1 to {max}", { value: brokers, max: limits.MAX_BROKERS }));
  const seen = new Set();
  let total = 0;
  doc.topics.forEach((t, i) => {
    const who = tr("topic {name}", { name: t.name || i + 1 });
    if (!TOPIC_NAME.test(t.name) || t.name === "." || t.name === "..")
      add(`topics[${i}].name`, tr("Topic name '{name}' is not a legal Kafka topic name: use letters, digits, '.', '_' and '-' (at most 249)", { name: t.name }));
    else if (seen.has(t.name)) add(`topics[${i}].name`, tr("Topic {name} is named twice", { name: t.name }));
    seen.add(t.name);
    if (!isInt(t.partitions) || t.partitions < 1 || t.partitions > limits.MAX_PARTITIONS)
      add(`topics[${i}].partitions`, tr("Partitions of {who}: {value} is not a whole number from 1 to {max}", { who, value: t.partitions, max: limits.MAX_PARTITIONS }));
    else total += t.partitions;
    if (!isInt(t.replication_factor) || t.replication_factor < 1)
      add(`topics[${i}].replication_factor`, tr("Replication factor of {who}: {value} is not a whole number from 1", { who, value: t.replication_factor }));
    else if (brokersOk && t.replication_factor > brokers)
      add(`topics[${i}].replication_factor`, brokers === 1 ? tr("Replication factor of {who}: {value} is more than the {n} broker", { who, value: t.replication_factor, n: brokers })
        : tr("Replication factor of {who}: {value} is more than the {n} brokers", { who, value: t.replication_factor, n: brokers }));
  });
  if (!doc.topics.length) add("topics", t("Topics: the cluster needs at least one topic"));
  else if (total > limits.MAX_PARTITIONS) add("topics", t("Topics: {n} partitions in all, more than {max}", { n: total, max: limits.MAX_PARTITIONS }));
  const minIsr = doc.config["min.insync.replicas"];
  if (!isInt(minIsr) || minIsr < 1) add("config.min.insync.replicas", t("min.insync.replicas: {value} is not a whole number from 1", { value: minIsr }));
  for (const [key, lo] of [["replica.lag.time.max.ms", 1], ["zookeeper.session.timeout.ms", 300], ["broker.session.timeout.ms", 1]]) {
    const v = doc.config[key];
    if (v !== undefined && (!isInt(v) || v < lo)) add(`config.${key}`, t("{key}: {value} is not a whole number of ms from {lo}", { key, value: v, lo }));
  }
  const maxS = limits.MAX_DURATION_MS / 1000;
  if (!isInt(doc.duration_ms) || doc.duration_ms < 1000 || doc.duration_ms > limits.MAX_DURATION_MS)
    add("duration_ms", t("Duration: {value} s is not from 1 s to {max} s", { value: doc.duration_ms / 1000, max: maxS }));
  if (!isInt(doc.seed) || doc.seed < 0) add("seed", t("Seed: {value} is not a whole number from 0", { value: doc.seed }));
  doc.clients.forEach((c, i) => {
    if (c.type === "producer" && (!isInt(c.rate_per_s) || c.rate_per_s < 0 || c.rate_per_s > limits.MAX_RATE_PER_S))
      add(`clients[${i}].rate_per_s`, t("Producer rate: {value} is not a whole number of records/s from 0 to {max}", { value: c.rate_per_s, max: limits.MAX_RATE_PER_S }));
  });
  return errors;
}

/** The server's error in words: what it says and what is allowed (its field is where it shows). */
export function serverMessage(err) {
  if (!err) return t("The server refused the scenario");
  return (err.message || t("is not valid")) + (err.allowed ? t(" (allowed: {allowed})", { allowed: err.allowed }) : "");
}

export function newClusterPane(app, eras, dlg) {
  const limits = eras.limits;
  const fields = new Map();      // document path -> the input that holds it
  const version = h("select#nc-version", null, ...eras.versions.map(v => eraOption(v, (eras.notes || {})[v])));
  const versionNote = h("div.dim.small.era-note#nc-version-note");
  version.value = "2.6";
  const name = h("input#nc-name", { type: "text", value: "my cluster", size: 30 });
  const brokers = h("input#nc-brokers", { type: "number", min: 1, max: limits.MAX_BROKERS, value: 3 });
  const topics = h("div.rows#nc-topics");
  const addTopic = (n = "orders", p = 3, rf = 3) => {
    const row = h("div.row", null, h("input.nc-tname", { type: "text", value: n, size: 16, "aria-label": t("topic name") }),
      h("label", null, t("partitions"), h("input.nc-tparts", { type: "number", min: 1, max: limits.MAX_PARTITIONS, value: p })),
      h("label", null, "RF", h("input.nc-trf", { type: "number", min: 1, max: limits.MAX_BROKERS, value: rf })),
      h("button.small.ghost", { type: "button", text: t("remove"), onclick: () => row.remove() }));
    topics.append(row);
  };
  addTopic();
  const minIsr = h("input#nc-minisr", { type: "number", min: 1, value: 1 });
  const unclean = h("input#nc-unclean", { type: "checkbox" });
  const lag = h("input#nc-lag", { type: "number", min: 1 });
  const session = h("input#nc-session", { type: "number", min: 300 });
  const producer = h("input#nc-producer", { type: "checkbox", checked: true });
  const acks = h("select#nc-acks", null, ...["all", "1", "0"].map(a => h("option", { value: a, text: a })));
  const rate = h("input#nc-rate", { type: "number", min: 0, max: limits.MAX_RATE_PER_S, value: 20 });
  const consumer = h("input#nc-consumer", { type: "checkbox" });
  const duration = h("input#nc-duration", { type: "number", min: 1, max: limits.MAX_DURATION_MS / 1000, value: 120 });
  const seed = h("input#nc-seed", { type: "number", min: 0, value: 1 });
  const errorEl = h("div.err-text#nc-error", { role: "alert" });
  // the session that decides when a broker is dead: ZooKeeper's, or (KRaft) the controller's
  const sessionLabel = h("label", { text: "zookeeper.session.timeout.ms" });
  const sessionKey = () => ((eras.notes || {})[version.value] || {}).kraft ? "broker.session.timeout.ms" : "zookeeper.session.timeout.ms";
  const defaults = () => {
    const v = version.value, c = eras.config;
    lag.placeholder = c["replica.lag.time.max.ms"].defaults[v];
    const sk = sessionKey();
    sessionLabel.textContent = sk;
    session.placeholder = c[sk] ? c[sk].defaults[v] : "";
    unclean.checked = c["unclean.leader.election.enable"].defaults[v];
    const note = (eras.notes || {})[v];
    const path = note && note.kraft ? t("through the active controller (KRaft quorum, no ZooKeeper)")
      : note && note.isr_path === "controller" ? t("through the controller") : t("through ZooKeeper");
    versionNote.textContent = note ? t("rules of {rules} · ISR changes {path}: {text}", { rules: note.rules_of, path, text: note.text }) : "";
  };
  version.addEventListener("change", defaults);
  defaults();
  // an empty number field reads as NaN, not 0: it shows as an error instead of a silent zero
  const num = input => (input.value.trim() === "" ? NaN : Number(input.value));
  const build = () => {
    fields.clear();
    for (const [path, input] of [["name", name], ["kafka_version", version], ["brokers", brokers], ["topics", topics],
      ["config.min.insync.replicas", minIsr], ["config.replica.lag.time.max.ms", lag], [`config.${sessionKey()}`, session],
      ["clients[0].rate_per_s", rate], ["clients[0].acks", acks], ["duration_ms", duration], ["seed", seed]]) fields.set(path, input);
    const rows = Array.from(topics.querySelectorAll(".row"));
    const tlist = rows.map((r, i) => {
      fields.set(`topics[${i}].name`, r.querySelector(".nc-tname"));
      fields.set(`topics[${i}].partitions`, r.querySelector(".nc-tparts"));
      fields.set(`topics[${i}].replication_factor`, r.querySelector(".nc-trf"));
      return { name: r.querySelector(".nc-tname").value.trim(), partitions: num(r.querySelector(".nc-tparts")),
        replication_factor: num(r.querySelector(".nc-trf")) };
    });
    const config = { "min.insync.replicas": num(minIsr), "unclean.leader.election.enable": unclean.checked };
    if (lag.value) config["replica.lag.time.max.ms"] = num(lag);
    if (session.value) config[sessionKey()] = num(session);
    const clients = [];
    if (producer.checked && tlist.length) clients.push({ name: "p1", type: "producer", topic: tlist[0].name, acks: acks.value, rate_per_s: num(rate) });
    if (consumer.checked && tlist.length) clients.push({ name: "c1", type: "consumer", topic: tlist[0].name, "auto.offset.reset": "earliest" });
    return { name: name.value, description: "", seed: num(seed), kafka_version: version.value, brokers: num(brokers),
             config, topics: tlist, clients, timeline: [], duration_ms: Math.round(num(duration) * 1000) };
  };
  const pane = h("div");
  /** Mark every error's field and write its words beside it; the rest under the form. */
  const show = errors => {
    clearFieldErrors(pane);
    const loose = [];
    for (const e of errors) {
      const input = fields.get(e.field) || fields.get(e.field.replace(/\.[^.[\]]+$/, ""));
      if (input) showFieldError(input, e.message, e.field);
      else loose.push(e.message);
    }
    errorEl.textContent = loose.length ? loose.join("\n")
      : errors.length ? (errors.length === 1 ? t("{n} field to correct (marked in red)", { n: 1 }) : t("{n} fields to correct (marked in red)", { n: errors.length })) : "";
  };
  const create = async () => {
    const doc = build();
    const errors = checkCluster(doc, limits);
    show(errors);
    if (errors.length) return;
    const reply = await app.load({ scenario: doc }, true);
    if (reply && reply.ok) dlg.close();
    else if (reply) show([{ field: (reply.error && reply.error.field) || "", message: serverMessage(reply.error) }]);
  };
  // what an imported cluster takes from this form: its era and everything but brokers and topics
  const formParts = () => {
    const doc = build();
    return { kafka_version: doc.kafka_version, name: doc.name === "my cluster" ? "" : doc.name, seed: doc.seed,
      duration_ms: doc.duration_ms, config: doc.config,
      clients: topic => doc.clients.map(c => ({ ...c, topic })) };
  };
  pane.append(
    importSection(app, dlg, formParts),
    h("div.formgrid", null,
      h("label", { text: t("name") }), name,
      h("label", { text: "kafka_version" }), h("div", null, version, versionNote),
      h("label", { text: t("brokers (1–{max})", { max: limits.MAX_BROKERS }) }), h("div", null, brokers),
      h("label", { text: t("topics") }), h("div", null, topics, h("button.small", { type: "button", text: t("+ topic"), onclick: () => addTopic("t" + (topics.children.length + 1), 1, 3) })),
      h("label", { text: "min.insync.replicas" }), h("div", null, minIsr),
      h("label", { text: "unclean.leader.election.enable" }), unclean,
      h("label", { text: "replica.lag.time.max.ms" }), h("div", null, lag),
      sessionLabel, h("div", null, session),
      h("label", { text: t("steady producer p1") }), h("div", null, producer, " acks ", acks, " " + t("rate/s") + " ", rate),
      h("label", { text: t("consumer c1 (from earliest)") }), consumer,
      h("label", { text: t("duration (s)") }), h("div", null, duration),
      h("label", { text: t("seed") }), h("div", null, seed)),
    errorEl,
    h("div.form", { style: { marginTop: "12px" } }, h("button.primary#nc-create", { type: "button", text: t("Create cluster"), onclick: create })));
  return pane;
}

// Dialogs: scenario picker (library, new cluster, import), config editor, help, partition inspector.
import { h, clear } from "../dom.js";
import { ACTIONS, keyLabel, inMode } from "../actions.js";
import { errorText, kafkaNumber, kafkaDigits } from "../format.js";
import { epochColor } from "../palette.js";
import { searchPanel } from "./search.js";
import { libraryPane, pauseWhileOpen } from "./library_picker.js";
import { newClusterPane } from "./newcluster.js";
import { t } from "../i18n.js";

let libraryCache = null, erasCache = null;

export async function loadLibrary() {
  if (!libraryCache) libraryCache = (await (await fetch("/api/library")).json()).scenarios;
  return libraryCache;
}
export async function loadEras() {
  if (!erasCache) erasCache = await (await fetch("/api/eras")).json();
  return erasCache;
}

function frame(dlg, title, body, extraHead) {
  clear(dlg);
  dlg.append(h("div.dlg-head", null, h("h2", { text: title }), extraHead || null,
    h("button.ghost.close", { type: "button", text: "✕", "aria-label": t("close"), onclick: () => dlg.close() })),
    h("div.dlg-body", null, body));
  if (!dlg.open) dlg.showModal();
}

// -- scenario picker ------------------------------------------------------------------------------
export async function openPicker(app, tab = "library") {
  const dlg = document.getElementById("dlg-picker");
  const [lib, eras] = await Promise.all([loadLibrary(), loadEras()]);
  const body = h("div");
  const tabs = h("div.dlg-tabs");
  const show = name => {
    for (const b of tabs.children) b.classList.toggle("active", b.dataset.tab === name);
    clear(body);
    body.append(name === "library" ? libraryPane(app, lib, dlg) : name === "new" ? newClusterPane(app, eras, dlg) : importPane(app, dlg));
  };
  for (const [id, label] of [["library", t("Library scenarios")], ["new", t("New cluster")], ["import", t("Import JSON")]]) {
    tabs.append(h("button", { type: "button", text: label, dataset: { tab: id }, onclick: () => show(id) }));
  }
  frame(dlg, t("Scenarios"), body, tabs);
  show(tab);
  pauseWhileOpen(app, dlg);
}

function importPane(app, dlg) {
  const area = h("textarea.json#import-json", { spellcheck: false, placeholder: t("Paste a scenario document (see the scenario format)") });
  const errorEl = h("div.err-text");
  fetch(`/api/rooms/${encodeURIComponent(app.store.room)}/scenario.json`).then(r => r.ok ? r.text() : "").then(t => { if (!area.value) area.value = t; });
  return h("div", null, h("p.dim", { text: t("The current session as a scenario (your live commands are in its timeline). Edit it or paste another one.") }),
    area, errorEl, h("div.form", null, h("button.primary#import-load", { type: "button", text: t("Load"), onclick: async () => {
      errorEl.textContent = "";
      let doc;
      try { doc = JSON.parse(area.value); } catch (e) { errorEl.textContent = t("not valid JSON: {detail}", { detail: e.message }); return; }
      const reply = await app.load({ scenario: doc }, true);
      if (reply && reply.ok) dlg.close(); else if (reply) errorEl.textContent = errorText(reply.error);
    } })));
}

// -- config editor ------------------------------------------------------------------------------------
const ACKS_IN_USE_TITLE = t("acks is the default of producers that set none: a producer's own acks in the scenario, or the acks a send chose, overrides it");

// the config table's scope column, in the page's language
const SCOPE_WORDS = { broker: t("broker"), topic: t("topic"), client: t("client"), producer: t("producer"),
  consumer: t("consumer"), sim: t("sim") };

/** What the producers of the run really send with (the acks of their records), one per producer. */
export function acksInUse(store) {
  const used = [];
  for (const [name, c] of store.clients) if (c.type === "producer") used.push(`${name} acks=${c.acks}`);
  return used.length ? t("in use: {list}", { list: used.join(", ") }) : t("no producer");
}

export async function openConfig(app) {
  const dlg = document.getElementById("dlg-config");
  const eras = await loadEras();
  const s = app.store;
  if (!s.meta) return;
  const v = s.meta.kafka_version;
  const edits = new Map();
  const rows = h("tbody");
  const shownAcks = [];      // the acks row's "in use" line, redrawn from the frames
  for (const [key, spec] of Object.entries(eras.config)) {
    if (!spec.known.includes(v)) continue;
    const current = s.meta.config[key];
    const def = spec.defaults[v];
    let input;
    if (spec.kind === "bool") {
      input = h("select", null, h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
      input.value = String(current);
    } else if (spec.kind.startsWith("enum:")) {
      // a key whose default is unset (replica.selector.class) offers "(unset)" too
      const unset = def === null ? [h("option", { value: "", text: t("(unset)") })] : [];
      input = h("select", null, ...unset, ...spec.kind.slice(5).split("|").map(o => h("option", { value: o, text: o })));
      input.value = current === null || current === undefined ? "" : String(current);
    } else if (spec.kind === "str") {
      input = h("input", { type: "text", value: current ?? "", maxlength: 64 });
    } else if (spec.kind === "acks") {
      input = h("select", null, ...["all", "1", "0"].map(o => h("option", { value: o, text: o })));
      input.value = String(current);
    } else {
      input = h("input", { type: "number", value: kafkaDigits(current), min: spec.min === null ? undefined : spec.min });
    }
    // a producer's own acks (set on the client in the scenario, or per send) overrides this key:
    // the row says what the producers really use next to the default it sets
    const inUse = spec.kind === "acks" ? h("span.dim.small.cfg-in-use", { title: ACKS_IN_USE_TITLE }) : null;
    if (inUse) shownAcks.push(inUse);
    const tr = h("tr", null, h("td.key", { text: key }), h("td.dim", { text: (SCOPE_WORDS[spec.scope] || spec.scope) + (spec.dynamic ? t(" (dynamic)") : "") }),
      h("td.mono.dim", { text: kafkaNumber(def) }), h("td", null, input, inUse ? " " : null, inUse));
    input.addEventListener("change", () => {
      let val = input.value;
      if (spec.kind === "bool") val = val === "true";
      else if (spec.kind === "int" || spec.kind === "int?") val = val === "" ? null : Number(val);
      else if (spec.kind.startsWith("enum:") && val === "") val = null;
      if (String(val) === String(current)) edits.delete(key); else edits.set(key, val);
      tr.classList.toggle("changed", edits.has(key));
      applyBtn.disabled = edits.size === 0;
      applyBtn.textContent = t("Apply {n} change(s) & restart", { n: edits.size }) + (s.clock && s.clock.commands ? t(" (replays {n} command(s))", { n: s.clock.commands }) : "");
    });
    rows.append(tr);
  }
  const applyBtn = h("button.primary", { type: "button", text: t("Apply & restart"), disabled: true, onclick: async () => {
    if (await app.reconfigure({ config: Object.fromEntries(edits) })) dlg.close();
  } });
  const live = h("div");
  const shown = [];       // [topic, key, input, label]: redrawn from the frames while the dialog is open
  const topicValue = (name, key) => {
    const t = s.meta.topics.find(x => x.name === name);
    return t && t.config[key] !== undefined ? t.config[key] : s.meta.config[key];
  };
  const setNow = t("set now");      // (the loop below names its topic t)
  for (const t of s.meta.topics) {
    const min = h("input", { type: "number", min: 1, value: t.config["min.insync.replicas"] ?? s.meta.config["min.insync.replicas"] });
    const unc = h("select", null, h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
    unc.value = String(t.config["unclean.leader.election.enable"] ?? s.meta.config["unclean.leader.election.enable"]);
    const minNow = h("span.dim.small.cfg-now", { dataset: { topic: t.name, key: "min.insync.replicas" } });
    const uncNow = h("span.dim.small.cfg-now", { dataset: { topic: t.name, key: "unclean.leader.election.enable" } });
    shown.push([t.name, "min.insync.replicas", min, minNow], [t.name, "unclean.leader.election.enable", unc, uncNow]);
    live.append(h("div.form", null, h("b", { text: t.name }),
      h("label", null, "min.insync.replicas", min), minNow,
      h("button.small", { type: "button", text: setNow, onclick: () => app.command({ op: "set_config", topic: t.name, key: "min.insync.replicas", value: Number(min.value) }, `${t.name}: min.insync.replicas=${min.value}`) }),
      h("label", null, "unclean.leader.election.enable", unc), uncNow,
      h("button.small", { type: "button", text: setNow, onclick: () => app.command({ op: "set_config", topic: t.name, key: "unclean.leader.election.enable", value: unc.value === "true" }, `${t.name}: unclean.leader.election.enable=${unc.value}`) })));
  }
  // the values in force come from the frames, not from what the dialog was opened with
  const last = new Map();
  const refresh = () => {
    if (!dlg.open || !s.meta) { clearInterval(timer); return; }
    for (const el of shownAcks) el.textContent = acksInUse(s);
    for (const [name, key, input, label] of shown) {
      const now = String(topicValue(name, key));
      label.textContent = t("in force: {value}", { value: now });
      if (last.get(label) !== now && document.activeElement !== input) input.value = now;
      last.set(label, now);
    }
  };
  clearInterval(dlg.__timer);
  const timer = dlg.__timer = setInterval(refresh, 250);
  frame(dlg, t("Config — kafka_version {v}", { v }), h("div", null,
    searchPanel(app, () => edits),
    h("h3", { text: t("Topic configs (dynamic: applied to the running cluster, kafka-configs.sh --alter)") }), live,
    h("h3", { text: t("Broker, client and simulator configs (static: the cluster restarts with them)") }),
    h("table.grid.cfg-table", null, h("thead", null, h("tr", null, ...[t("key"), t("scope"), t("default in {v}", { v }), t("value")].map(x => h("th", { text: x })))), rows),
    h("div.form", { style: { marginTop: "10px" } }, applyBtn)));
  refresh();
}

// -- help -----------------------------------------------------------------------------------------------
export function openHelp(app) {
  const dlg = document.getElementById("dlg-help");
  const keys = h("div.help-grid");
  for (const a of ACTIONS) {
    if (!a.keys.length || !inMode(a, app.store)) continue;
    const label = typeof a.label === "function" ? a.label(a.group === "broker" ? null : app.store) : a.label;
    keys.append(h("div.hk", null, h("span", { text: label + (a.group === "broker" ? t(" (selected broker)") : "") }), h("kbd", { text: keyLabel(a) })));
  }
  keys.append(h("div.hk", null, h("span", { text: t("Select broker N") }), h("kbd", { text: "0–9" })));
  const tryit = (title, steps, lib) => h("div.step", null, h("b", { text: title }), h("ol", null, ...steps.map(s => h("li", { text: s }))),
    lib ? h("button.small", { type: "button", text: t("Open {story}", { story: lib }), onclick: async () => { if (await app.load({ library: lib })) dlg.close(); } }) : null);
  frame(dlg, t("ISR Lab — help"), h("div", null,
    h("p", { text: app.store.quorum
      ? t("A Kafka cluster in KRaft mode (a Raft quorum of controllers instead of ZooKeeper), simulated event by event. Every line in the timeline names the rule that fired and its numbers; click one to highlight what it touched.")
      : t("A Kafka cluster of the ZooKeeper era, simulated event by event. Every line in the timeline names the rule that fired and its numbers; click one to highlight what it touched.") }),
    h("h3", { text: t("Things to try") }),
    h("div.try", null,
      tryit(t("Watch an ISR shrink"), [t("Open the scenario below and press Play (Space)."), t("Broker 2 is cut off from the other brokers at 5 s: its lag bar fills up."),
        t("After replica.lag.time.max.ms (30 s) the leader's isr-expiration task removes it: ISR SHRINK in the timeline, with the reason."),
        t("The state znode's zkVersion goes up while the leader epoch stays.")], "isr-shrink-slow-follower"),
      tryit(t("Cause NOT_ENOUGH_REPLICAS"), [t("In any 2.6 cluster open the Config editor (c) and set min.insync.replicas=2 for the topic (set now)."),
        t("Crash the two followers of a partition (click a broker, Crash)."), t("Wait for their ZooKeeper sessions to expire (the countdown on each broker card): the controller removes them from the ISR."),
        t("Produce with acks=all (Clients tab): the ledger shows failed NOT_ENOUGH_REPLICAS; acks=1 still succeeds.")], "not-enough-replicas"),
      tryit(t("Lose an acknowledged record under 0.10"), [t("Open the scenario below and press Play: it pauses on the violation."),
        t("Broker 3 became follower and truncated to its high watermark (pre-KIP-101), dropping the last committed record; then it was elected leader."),
        t("Jump to cause from the alarm; switch the era to 2.6 and watch the same story keep the record.")], "kip101-scenario-1-v0.10")),
    h("h3", { text: t("Keyboard") }), keys,
    h("h3", { text: t("Reading the picture") }),
    h("ul", null,
      h("li", { text: t("Log strips: one cell per offset, coloured by leader epoch; solid below the replica's high watermark (committed), faint above. White marker = HW, dashed amber = LEO, red underline = a record different from the leader's at that offset.") }),
      h("li", { text: t("Lag bar: how long a follower has not been caught up, against replica.lag.time.max.ms (red = the leader will drop it at its next isr-expiration check).") }),
      h("li", { text: t("Broker cards: state, CONTROLLER badge, ZooKeeper session and, while heartbeats do not arrive, the countdown to its expiry.") }),
      h("li", { text: t("KRaft eras: the controller voters above the brokers (violet = the Raft leader, the active controller; role, epoch, log end offset and high watermark). Broker cards show the broker epoch, FENCED, CONTROLLED SHUTDOWN, the metadata offset applied and its lag, and the countdown to fencing at broker.session.timeout.ms once a heartbeat is late. The Quorum tab lists the metadata log: records under the high watermark line are not committed yet; click one to see what it changed.") }),
      h("li", { text: t("Dots: requests (filled) and responses (hollow) between brokers, ZooKeeper and clients; messages shorter than a frame are shown in slow motion. Red = dropped by a network fault.") }))));
}

// -- partition inspector -------------------------------------------------------------------------------
export async function openInspect(app, key) {
  const dlg = document.getElementById("dlg-inspect");
  const reply = await app.request("inspect", { partition: key });
  if (!reply.ok) { app.toast(t("Cannot inspect {partition}", { partition: key }), errorText(reply.error), "error"); return; }
  const p = reply.partition;
  const leader = p.replica_state.find(r => r.broker === p.leader);
  const byOffset = new Map();
  for (const r of p.replica_state) for (const [o, e, id] of r.records) {
    if (!byOffset.has(o)) byOffset.set(o, {});
    byOffset.get(o)[r.broker] = [e, id];
  }
  const offsets = Array.from(byOffset.keys()).sort((a, b) => b - a);
  const head = h("tr", null, h("th", { text: t("offset") }), ...p.replica_state.map(r =>
    h("th", { text: `b${r.broker}${r.broker === p.leader ? " ♛" : ""} (LEO ${r.leo}, HW ${r.hw})` })));
  const body = h("tbody");
  for (const o of offsets) {
    const cells = p.replica_state.map(r => {
      const v = byOffset.get(o)[r.broker];
      if (!v) return h("td.dim", { text: "" });
      const lv = leader && byOffset.get(o)[leader.broker];
      const diverged = lv && lv[1] !== v[1];
      const td = h("td" + (diverged ? ".div" : o >= r.hw ? ".unc" : ""), { text: `${v[1]}  e${v[0]}`,
        style: { borderLeft: `3px solid ${epochColor(v[0])}` } });
      return td;
    });
    body.append(h("tr", null, h("td", { text: String(o) }), ...cells));
  }
  frame(dlg, t("{partition}: the last {n} offsets of each replica", { partition: key, n: offsets.length }), h("div", null,
    h("p.dim", { text: t("Cell = record id and the leader epoch it was written in. Italic = above that replica's HW (not committed there); red = different from the leader's record at that offset.") }),
    h("table.grid.inspect-table", null, h("thead", null, head), body)));
}

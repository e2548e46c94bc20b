// Faults: every broker's actions in one table (from the actions table), in KRaft eras every
// controller voter's too, link cuts, slow links, network partitions, healing, and cluster-wide
// operations.
import { h, clear, reconcile } from "../dom.js";
import { ACTIONS, isEnabled, labelOf, runAction, keyLabel, inMode } from "../actions.js";
import { sortedBrokers } from "../store.js";
import { dedicatedVoters } from "../kraft.js";
import { t } from "../i18n.js";

const QUICK = ["crash", "power", "start", "shutdown", "pause", "isolate-zk", "isolate-controllers", "isolate-brokers", "expire", "heal-broker"];
const SHORT = { crash: t("crash"), power: t("power off"), start: t("start"), shutdown: t("ctl. shutdown"), pause: t("pause"), "isolate-zk": "✂ ZK",
  "isolate-controllers": t("✂ controllers"), "isolate-brokers": t("✂ brokers"), expire: t("expire session"), "heal-broker": t("heal") };
const VOTER_QUICK = ["controller-crash", "controller-restart", "controller-shutdown", "controller-pause", "controller-isolate", "controller-heal"];
const VOTER_SHORT = { "controller-crash": t("crash"), "controller-restart": t("start"), "controller-shutdown": t("shutdown"),
  "controller-pause": t("pause"), "controller-isolate": t("✂ all"), "controller-heal": t("heal") };

let voterNames = new Set();      // dedicated controller voters are numbered nodes too
function nodeName(n) {
  if (typeof n === "number") return voterNames.has(n) ? t("controller {id}", { id: n }) : t("broker {id}", { id: n });
  return n === "zk" ? "ZooKeeper" : n === "controllers" ? t("all controllers") : n;
}
function parseNode(v) { return /^\d+$/.test(v) ? Number(v) : v; }

export function createNetwork(app) {
  const panel = document.getElementById("panel-network");
  const brokerTable = h("tbody");
  const cutFrom = h("select", { "aria-label": t("from") }), cutTo = h("select", { "aria-label": t("to") });
  const both = h("input", { type: "checkbox", checked: true });
  const latency = h("input", { type: "number", min: 0, max: 600000, value: 2000, "aria-label": t("latency ms") });
  const groupsEl = h("div.rows");
  const voterTable = h("tbody#voter-faults");
  const voterHead = h("h3", { text: t("Controllers"), hidden: true });
  const voterNote = h("div.dim.small", { hidden: true,
    text: t("The controller quorum (Raft): losing the active controller starts an election; losing two of three voters loses the quorum.") });
  const faultsEl = h("div");
  const createName = h("input", { type: "text", value: "events", size: 10, "aria-label": t("topic name") });
  const createParts = h("input", { type: "number", min: 1, max: 256, value: 3, "aria-label": t("partitions") });
  const createRf = h("input", { type: "number", min: 1, max: 16, value: 3, "aria-label": t("replication factor") });

  function cut() {
    const a = parseNode(cutFrom.value), b = parseNode(cutTo.value);
    const ops = [{ op: "cut", from: a, to: b }];
    if (both.checked) ops.push({ op: "cut", from: b, to: a });
    app.command(ops, t("cut {a} {dir} {b}", { a: nodeName(a), dir: both.checked ? "<->" : "->", b: nodeName(b) }));
  }
  function slow() {
    const a = parseNode(cutFrom.value), b = parseNode(cutTo.value);
    app.command({ op: "slow", from: a, to: b, latency_ms: Number(latency.value) }, t("slow {a} -> {b}", { a: nodeName(a), b: nodeName(b) }));
  }
  function partition() {
    const groups = [[], []];
    for (const row of groupsEl.querySelectorAll(".row")) {
      const g = row.querySelector("input:checked");
      if (g && g.value !== "-") groups[Number(g.value)].push(parseNode(row.dataset.node));
    }
    const nonEmpty = groups.filter(g => g.length);
    if (!nonEmpty.length) { app.toast(t("Put some nodes in group A or B first")); return; }
    app.command({ op: "partition", groups: nonEmpty }, t("partition the network"));
  }

  panel.append(
    h("h3", { text: t("Brokers") }),
    h("div.dim.small", { text: t("Click a broker card for every action; select one with its id key (0-9) and use the shortcuts.") }),
    h("table.grid", null, brokerTable),
    voterHead, voterNote, h("table.grid", null, voterTable),
    h("h3", { text: t("Links") }),
    h("div.form", null, h("label", null, t("from"), cutFrom), h("label", null, t("to"), cutTo),
      h("label", null, both, t("both ways")), h("button", { type: "button", text: t("Cut"), onclick: cut })),
    h("div.form", null, h("label", null, t("one-way latency (ms)"), latency), h("button", { type: "button", text: t("Slow the link (from → to)"), onclick: slow })),
    h("h3", { text: t("Network partition") }),
    h("div.dim.small", { text: t("Nodes only talk within their group; nodes in no group form one more group.") }),
    groupsEl,
    h("div.form", null, h("button", { type: "button", text: t("Partition"), onclick: partition }),
      h("button", { type: "button", text: t("Heal every link"), onclick: () => runAction(ACTIONS.find(a => a.id === "heal-all"), { app, store: app.store }) })),
    h("h3", { text: t("Active faults") }), faultsEl,
    h("h3", { text: t("Cluster") }),
    h("div.form", null, h("button", { type: "button", text: t("Preferred replica election"), title: t("kafka-preferred-replica-election.sh: writes /admin/preferred_replica_election"),
      onclick: () => app.command({ op: "elect_preferred" }, t("preferred replica election")) }),
      h("button", { type: "button", text: t("Config editor…"), onclick: () => app.openConfig() })),
    h("div.form", null, h("label", null, t("new topic"), createName), h("label", null, t("partitions"), createParts), h("label", null, "RF", createRf),
      h("button", { type: "button", text: t("Create topic"), onclick: () => app.command({ op: "create_topic", name: createName.value,
        partitions: Number(createParts.value), replication_factor: Number(createRf.value) }, t("create topic {name}", { name: createName.value })) })));

  let nodesKey = "";
  function fillNodes(store) {
    const voters = dedicatedVoters(store);
    voterNames = new Set(voters);
    const hub = store.quorum ? [...voters, "controllers"] : ["zk"];
    const nodes = [...sortedBrokers(store).map(b => b.id), ...hub, ...store.clients.keys()];
    const key = nodes.join("|");
    if (key === nodesKey) return;
    nodesKey = key;
    for (const sel of [cutFrom, cutTo]) {
      const keep = sel.value;
      sel.replaceChildren(...nodes.map(n => h("option", { value: String(n), text: nodeName(n) })));
      if (keep) sel.value = keep;
    }
    if (cutTo.selectedIndex === cutFrom.selectedIndex && nodes.length > 1) cutTo.selectedIndex = 1;
    clear(groupsEl);
    for (const n of nodes.filter(x => x !== "controllers")) {      // a group lists nodes, not "all controllers"
      const name = "grp-" + String(n);
      groupsEl.append(h("div.row", { dataset: { node: String(n) } },
        h("span", { text: nodeName(n), style: { minWidth: "110px", display: "inline-block" } }),
        ...[["0", "A"], ["1", "B"], ["-", t("none")]].map(([v, l]) => h("label.small", null,
          h("input", { type: "radio", name, value: v, checked: v === "-" }), l))));
    }
  }

  function render(store, changes) {
    if (!store.meta) return;
    fillNodes(store);
    const brokers = sortedBrokers(store);
    reconcile(brokerTable, brokers, b => b.id, () => h("tr"), (tr, b) => {
      const key = JSON.stringify([b.state, b.isolated_from, b.zk && b.zk.session_id, Boolean(store.quorum)]);
      if (tr.__k === key) return;
      tr.__k = key;
      const buttons = QUICK.map(id => ACTIONS.find(a => a.id === id)).filter(a => inMode(a, store)).map(a => {
        const label = a.id === "pause" && b.state === "paused" ? t("resume") : SHORT[a.id];
        return h("button.small", { type: "button", text: label, disabled: !isEnabled(a, store, b),
          title: t("{label} ({key})", { label: labelOf(a, store, b), key: keyLabel(a) }), onclick: () => runAction(a, { app, store: app.store, broker: app.store.brokers.get(b.id) }) });
      });
      tr.replaceChildren(h("td", { text: `b${b.id}` }), h("td", { style: { whiteSpace: "normal" } }, ...buttons));
    });
    renderVoters(store);
    const links = store.links || { blocked: [], slow: [] };
    const key = JSON.stringify(links);
    if (faultsEl.__k !== key) {
      faultsEl.__k = key;
      clear(faultsEl);
      if (!links.blocked.length && !links.slow.length) faultsEl.append(h("div.dim.small", { text: t("no cut or slow links") }));
      for (const [a, b] of links.blocked) {
        faultsEl.append(h("div.row", null, h("span.chip.bad", { text: `${nodeName(a)} ✂→ ${nodeName(b)}` }),
          h("button.small.ghost", { type: "button", text: t("heal"), onclick: () => app.command({ op: "heal", from: a, to: b }, t("heal {a} <-> {b}", { a: nodeName(a), b: nodeName(b) })) })));
      }
      for (const [a, b, ms] of links.slow) {
        faultsEl.append(h("div.row", null, h("span.chip.warn", { text: `${nodeName(a)} → ${nodeName(b)}: ${ms} ms` }),
          h("button.small.ghost", { type: "button", text: t("heal"), onclick: () => app.command({ op: "heal", from: a, to: b }, t("heal link")) })));
      }
    }
  }
  /** One row per controller voter with its actions (KRaft eras only). */
  function renderVoters(store) {
    const q = store.quorum;
    voterHead.hidden = voterNote.hidden = !q;
    const voters = q ? q.voters : [];
    reconcile(voterTable, voters, v => v.id, () => h("tr"), (tr, v) => {
      const key = JSON.stringify([v.state, v.role, q.active, store.links]);
      if (tr.__k === key) return;
      tr.__k = key;
      tr.dataset.voter = v.id;
      const buttons = VOTER_QUICK.map(id => ACTIONS.find(a => a.id === id)).map(a => {
        const label = a.id === "controller-pause" && v.state === "paused" ? t("resume") : VOTER_SHORT[a.id];
        return h("button.small", { type: "button", text: label, disabled: !isEnabled(a, store, v), dataset: { op: a.id },
          title: labelOf(a, store, v), onclick: () => runAction(a, { app, store: app.store, voter: app.store.quorum.voters.find(x => x.id === v.id) }) });
      });
      tr.replaceChildren(h("td", { text: `c${v.id}${q.active === v.id ? " ★" : ""}`, title: q.active === v.id ? t("the active controller") : `Raft ${v.role}` }),
        h("td", { style: { whiteSpace: "normal" } }, ...buttons));
    });
  }

  return { render };
}

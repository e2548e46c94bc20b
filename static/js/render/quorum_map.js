// KRaft eras on the cluster map: the controller voters as nodes (Raft role, epoch, log end offset
// and high watermark; the Raft leader is the active controller) in place of the ZooKeeper pill,
// and on each broker card what the quorum knows of it: broker epoch, fenced or not, controlled
// shutdown, how far its metadata lags the log, and the session deadline the active controller
// fences it at (the KRaft analogue of the ZooKeeper session countdown, docs/model.md §20.4:
// fenced at last heartbeat + broker.session.timeout.ms).
import { h, reconcile, setText, setClass, setStyle } from "../dom.js";
import { shortSeconds } from "../format.js";
import { voterHw } from "../kraft.js";
import { t } from "../i18n.js";

const ROLE = { leader: "leader", follower: "follower", candidate: "candidate", prospective: "prospective",
  unattached: "unattached", resigned: "resigned" };

export function createVoterLayer(app, nodesEl) {
  const layer = h("div.voters");
  nodesEl.append(layer);

  function create() {
    const el = h("div.node.voter", { tabIndex: 0, onclick: () => {
      // the live page acts on a voter; a replay only shows the quorum panel
      if (app.controllerMenu) app.controllerMenu(Number(el.dataset.voter), el); else app.showTab("zk");
    } },
      h("div.vrow1", null, h("span.vname"), h("span.vrole")),
      h("div.vrow2.mono"));
    return el;
  }

  function update(el, v, q, box, store) {
    el.dataset.voter = v.id;
    el.style.left = box.x + "px"; el.style.top = box.y + "px"; el.style.width = box.w + "px";
    const active = q.active === v.id;
    el.className = "node voter r-" + v.role + " s-" + v.state + (active ? " active" : "") + (box.narrow ? " narrow" : "") + (box.tiny ? " tiny" : "")
      + (store.ui.highlight.voters.has(v.id) ? " hl" : "");
    setText(el.querySelector(".vname"), box.tiny ? t("Ctrl {id}", { id: v.id }) : t("Controller {id}", { id: v.id }));   // five voters on a narrow map
    const down = v.state !== "running";
    // Raft's role names stay as QuorumState names them; "active" is the cluster's word for the leader
    setText(el.querySelector(".vrole"), down ? (v.state === "paused" ? "paused" : "down") : active ? t("active") : ROLE[v.role] || v.role);
    el.title = t("controller voter {id}: Raft {role}, epoch {epoch}", { id: v.id, role: v.role, epoch: v.epoch })
      + (active ? t(" — the active controller") : "")
      + (v.voted_for !== null && v.voted_for !== undefined ? t("; voted for {id}", { id: v.voted_for }) : "") + t(" (click: controller actions)");
    // the narrower the node, the shorter the words; the epoch goes last (the quorum panel has it)
    const hw = voterHw(v, box.tiny || box.narrow);
    setText(el.querySelector(".vrow2"), box.tiny ? `LEO ${v.log_end_offset}\nHW ${hw}`
      : box.narrow ? `e${v.epoch} · LEO ${v.log_end_offset} · HW ${hw}`
      : `epoch ${v.epoch} · LEO ${v.log_end_offset} · HW ${hw}`);
    el.querySelector(".vrow2").title = t("Raft epoch {epoch} · log end offset {leo} · high watermark {hw}", { epoch: v.epoch, leo: v.log_end_offset, hw: voterHw(v) });
  }

  /** Draw the voters that are nodes of their own (`layout.nodes["v:<id>"]`); none in ZooKeeper mode. */
  function render(store, layout) {
    const q = store.quorum;
    const voters = q ? q.voters.filter(v => layout.nodes["v:" + v.id]) : [];
    reconcile(layer, voters, v => v.id, create, (el, v) => update(el, v, q, layout.nodes["v:" + v.id], store));
  }

  return { render };
}

/** The broker card's KRaft lines: built once per card, filled each frame. */
export function kraftLines() {
  return h("div.kraft", null, h("div.kline", null, h("span.kepoch.mono"), h("span.kchips")), h("div.kmeta.mono"));
}

function brokerChips(b) {
  const chips = [];
  if (b.fenced) chips.push(["FENCED", "bad", t("fenced by the active controller: not a leader, not in any ISR, no new leadership")]);
  if (b.in_controlled_shutdown) chips.push(["CONTROLLED SHUTDOWN", "warn", t("asked to shut down through its heartbeats; leaderships moving away")]);
  return chips;
}

/** Broker epoch with the fencing and controlled-shutdown chips; the metadata it has applied. */
export function updateKraftLines(el, b, wide) {
  const epochEl = el.querySelector(".kraft .kepoch");
  const epoch = typeof b.broker_epoch === "number" && b.broker_epoch >= 0 ? b.broker_epoch : "–";
  setText(epochEl, `broker epoch ${epoch}`);
  epochEl.title = t("broker epoch: the offset of its RegisterBrokerRecord; a new incarnation registers with a new one");
  const line = el.querySelector(".kraft .kmeta");
  // a stopped broker fetches nothing: its metadata offset means nothing until it restarts; a lag
  // of 0 goes without saying; a narrow card uses the short word
  const fetching = b.state !== "stopped" && b.metadata_offset !== null && b.metadata_offset !== undefined;
  const lag = b.metadata_lag ? ` · lag ${b.metadata_lag}` : "";
  const word = wide ? t("metadata offset") : t("metadata");     // pybabel reads no msgid inside a template literal
  setText(line, !fetching ? t("no metadata fetch") : `${word} ${b.metadata_offset}${lag}`);
  line.title = t("the metadata log offset this broker has applied, and how far that is behind the log's high watermark");
  setClass(line, "lagging", fetching && b.metadata_lag > 5);     // a record or two in flight is the normal state
  const chipsEl = el.querySelector(".kraft .kchips");
  const chips = brokerChips(b);
  const key = chips.map(c => c[0]).join("|");
  if (chipsEl.__key !== key) {
    chipsEl.__key = key;
    chipsEl.replaceChildren(...chips.map(([word, k, title]) => h("span.chip." + k, { text: word, title })));
  }
}

function cutFromQuorum(b, store) {
  const from = b.isolated_from || [];
  return store.quorum.active !== null && from.includes(store.quorum.active);
}

/** The session line in KRaft: the controller's fencing deadline, counted down once a heartbeat
 *  is overdue (a heartbeat normally renews it every broker.heartbeat.interval.ms). */
export function updateFencingDeadline(el, b, store, tNow) {
  const cfg = (store.meta && store.meta.config) || {};
  const timeout = Number(cfg["broker.session.timeout.ms"]) || 9000;
  const interval = Number(cfg["broker.heartbeat.interval.ms"]) || 2000;
  const line = el.querySelector(".zk");
  const text = line.querySelector(".zktext");
  const ttl = el.querySelector(".ttl");
  const deadline = b.session_deadline_ms;
  if (deadline === null || deadline === undefined) {
    line.className = "zk " + (b.fenced ? "none" : "connected");
    setText(text, b.fenced ? t("fenced · no session") : b.state === "running" ? t("registering…") : t("no session"));
    ttl.hidden = true;
    return;
  }
  const left = Math.max(0, deadline - tNow);
  // a heartbeat more than half an interval late, or a broker that cannot send one (stopped,
  // paused, cut off from the controllers): the countdown to fencing is what matters now
  const silent = b.state === "stopped" || b.state === "paused" || cutFromQuorum(b, store);
  const overdue = silent || left < timeout - 1.5 * interval;
  line.className = "zk " + (overdue ? "disconnected" : "connected");
  ttl.hidden = false;
  setStyle(ttl.firstChild, "width", (Math.min(1, left / timeout) * 100).toFixed(1) + "%");
  setClass(ttl, "low", overdue);
  const wide = Boolean(el.__wide);       // set by the map from the card's layout box (no layout read here)
  setText(text, overdue ? t("fenced in {s}", { s: shortSeconds(left) })
    : (wide ? t("heartbeats ok · ") : "") + t("session {s}", { s: shortSeconds(left) }));
  setClass(text, "countdown", overdue);
}

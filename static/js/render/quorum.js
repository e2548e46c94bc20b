// The quorum panel (KRaft eras, in place of the znode tree): the controller voters with their Raft
// role, epoch, log end offset and high watermark, and the newest records of the metadata log.
// Records above the high watermark are not committed yet and are drawn apart; clicking a record
// highlights what it changed (a PartitionChangeRecord its partition's card, a broker record that
// broker) and shows its fields.
import { h, reconcile, setText, setClass, clear } from "../dom.js";
import { epochColor } from "../palette.js";
import { recordSummary, recordTarget, voterHw } from "../kraft.js";
import { t } from "../i18n.js";

const ROLE_TITLE = {
  leader: t("Raft leader: the active controller, the only one that writes the metadata log"),
  follower: t("fetches the metadata log from the leader; votes in elections"),
  candidate: t("asking the other voters for their votes (Vote) in a new epoch"),
  prospective: t("pre-vote (4.x): checks that it could win before bumping the epoch"),
  unattached: t("knows no leader in its epoch"),
  resigned: t("a leader that gave up (shutdown or lost the quorum)"),
};
// what a record's fields are called, Kafka's names first; the rest of the fields follow
const SHOWN = ["offset", "epoch", "type", "committed", "topic", "partition", "leader", "isr", "elr", "last_known_elr",
  "leader_epoch", "partition_epoch", "leader_recovery_state", "broker", "broker_epoch", "fenced"];

export function createQuorum(app) {
  const root = h("div.quorum");
  const head = h("div.qhead.small");
  const votersEl = h("div.qvoters");
  const logHead = h("div.qloghead.small", null, h("span", { text: t("Metadata log") }), h("span.dim.qlogfacts"),
    h("span.dim.qlogkey", { text: t(" · columns: offset · eN = the Raft epoch that wrote it · record") }));
  const logEl = h("div.qlog", { role: "list", "aria-label": t("metadata log") });
  const hwMark = h("div.qhw", { role: "separator" });
  const detail = h("pre.block.qdetail", { hidden: true });
  root.append(head, votersEl, logHead, logEl, detail);
  let selected = null;         // offset of the record the user clicked
  let reveal = false;          // scroll the clicked record into view at the next render
  let pinned = true;           // follow the log's tail until the user scrolls up
  logEl.addEventListener("scroll", () => follow());
  function follow() { pinned = logEl.scrollTop + logEl.clientHeight >= logEl.scrollHeight - 4; }

  function createVoter() {
    // one row per voter: name, Raft role, its vote (or "active controller"); epoch, log end and
    // high watermark under them
    return h("div.qvoter", null, h("b.qvid"), h("span.qrole"), h("span.qv4.small"), h("span.qv3.mono"));
  }

  function updateVoter(el, v, q, store) {
    const active = q.active === v.id;
    el.className = "qvoter r-" + v.role + " s-" + v.state + (active ? " active" : "") + (store.ui.highlight.voters.has(v.id) ? " hl" : "");
    el.dataset.voter = v.id;
    setText(el.querySelector(".qvid"), t("Controller {id}", { id: v.id }));
    const role = el.querySelector(".qrole");
    setText(role, v.role);
    role.title = ROLE_TITLE[v.role] || "";
    setText(el.querySelector(".qv3"), `epoch ${v.epoch} · LEO ${v.log_end_offset} · HW ${voterHw(v)}`);
    // the leader is what the cluster calls the active controller; a stopped voter keeps its last state
    const voted = v.voted_for === null || v.voted_for === undefined ? "" : t("voted for {id}", { id: v.voted_for });
    const line = v.state !== "running" ? `${v.state}${voted ? " · " + voted : ""}` : active ? t("active controller") : voted || t("no vote cast");
    const four = el.querySelector(".qv4");
    setText(four, line);
    setClass(four, "activec", active && v.state === "running");
  }

  function createNoOps() {
    return h("div.qrec.qnoop", { title: t("NoOpRecords: the active controller appends one every metadata.max.idle.interval.ms (500 ms) so that brokers see the log advance") },
      h("span.qoff.mono"), h("span.qep.mono"), h("span.qwhat", null, h("span.qtype", { text: "NoOp" }), " ", h("span.qtext")));
  }

  function updateNoOps(el, g) {
    el.dataset.offset = g.first;
    el.dataset.type = "NoOpRecord";
    el.dataset.count = g.count;
    setClass(el, "uncommitted", !g.committed);
    setText(el.querySelector(".qoff"), g.first);
    const ep = el.querySelector(".qep");
    setText(ep, `e${g.epoch}`);
    ep.style.color = epochColor(g.epoch);
    setText(el.querySelector(".qtext"), g.count === 1 ? "" : t("×{n} (offsets {first}–{last})", { n: g.count, first: g.first, last: g.last }));
  }

  function createRecord(r) {
    return h("div.qrec", { role: "listitem", tabIndex: 0, onclick: () => pick(r.offset), onkeydown: e => { if (e.key === "Enter") pick(r.offset); } },
      h("span.qoff.mono"), h("span.qep.mono"), h("span.qwhat", null, h("span.qtype"), " ", h("span.qtext")));
  }

  function updateRecord(el, r) {
    el.dataset.offset = r.offset;
    el.dataset.type = r.type;
    setClass(el, "uncommitted", !r.committed);
    setClass(el, "selected", selected === r.offset);
    setClass(el, "clickable", Boolean(recordTarget(r)));
    setText(el.querySelector(".qoff"), r.offset);
    const ep = el.querySelector(".qep");
    setText(ep, `e${r.epoch}`);
    ep.style.color = epochColor(r.epoch);
    ep.title = t("written in Raft epoch {epoch}", { epoch: r.epoch });
    setText(el.querySelector(".qtype"), r.type.replace(/Record$/, ""));
    el.querySelector(".qtype").title = r.type;
    setText(el.querySelector(".qtext"), recordSummary(r));
    el.title = r.committed ? t("committed (below the high watermark)") : t("not committed yet: above the quorum's high watermark");
  }

  /** Highlight what record `offset` changed and show its fields. */
  function pick(offset) {
    selected = offset;
    reveal = true;
    const r = findRecord(app.store, offset);
    if (r) app.highlightRecord(recordTarget(r));
    app.requestRender(true);
  }

  function findRecord(store, offset) {
    const q = store.quorum;
    return q ? q.log.find(r => r.offset === offset) || null : null;
  }

  let lastKey = "";
  function render(store, changes, force) {
    const q = store.quorum;
    if (!q) return;
    const active = q.active === null || q.active === undefined ? t("none (election in progress)") : q.active;
    setText(head, t("Raft epoch {epoch} · active controller {active} · high watermark {hw}", { epoch: q.raft_epoch, active, hw: q.high_watermark }));
    reconcile(votersEl, q.voters, v => v.id, createVoter, (el, v) => updateVoter(el, v, q, store));
    const first = q.log.length ? q.log[0].offset : q.log_len;
    const shown = q.log.length < q.log_len ? t("offsets {first}–{last} of {n}", { first, last: q.log_len - 1, n: q.log_len }) : t("{n} records", { n: q.log_len });
    setText(logHead.querySelector(".qlogfacts"), " · " + shown + t(" · {n} uncommitted", { n: q.log.filter(r => !r.committed).length }));
    const key = JSON.stringify([q.log.length && q.log[q.log.length - 1].offset, q.high_watermark, q.log_len, selected, force]);
    if (key === lastKey && !force) return;
    lastKey = key;
    // the committed records, the high watermark line, then what the quorum has not committed yet
    const items = [...groupNoOps(q.log.filter(r => r.committed)), { hw: true }, ...groupNoOps(q.log.filter(r => !r.committed))];
    reconcile(logEl, items, it => (it.hw ? "hw" : it.noop ? "n" + it.first : it.offset),
      it => (it.hw ? hwMark : it.noop ? createNoOps() : createRecord(it)), (el, it) => {
        if (it.hw) setText(el, t("high watermark {hw}", { hw: q.high_watermark }));
        else if (it.noop) updateNoOps(el, it);
        else updateRecord(el, it);
      });
    const row = reveal && selected !== null ? logEl.querySelector(`.qrec[data-offset="${selected}"]`) : null;
    if (row) { row.scrollIntoView({ block: "nearest" }); reveal = false; follow(); }
    else if (pinned) logEl.scrollTop = logEl.scrollHeight;
    renderDetail(store);
  }

  /** Runs of NoOpRecords as one row each: they carry nothing but the log's heartbeat, and a run
   *  of them would push what changed the cluster out of sight. */
  function groupNoOps(records) {
    const out = [];
    for (const r of records) {
      const last = out[out.length - 1];
      if (r.type !== "NoOpRecord") out.push(r);
      else if (last && last.noop && last.epoch === r.epoch) { last.last = r.offset; last.count += 1; }
      else out.push({ noop: true, first: r.offset, last: r.offset, count: 1, epoch: r.epoch, committed: r.committed });
    }
    return out;
  }

  function renderDetail(store) {
    const r = selected === null ? null : findRecord(store, selected);
    detail.hidden = !r;
    clear(detail);
    if (!r) return;
    const keys = [...SHOWN.filter(k => k in r), ...Object.keys(r).filter(k => !SHOWN.includes(k) && k !== "text")];
    detail.textContent = keys.map(k => `${k}: ${JSON.stringify(r[k])}`).join("\n");
  }

  return { root, render, show(on) { root.hidden = !on; } };
}

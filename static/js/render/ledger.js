// The record ledger: what happened to each record, newest first, with filters (status, producer,
// partition, Kafka error) and pages. Every frame carries only the newest 30 records; a filter
// or an older page asks the room for its rows (the "ledger" request), so a filter finds a record
// that is long out of the frame. A replay cannot ask, and filters the rows its frames carry.
import { h, setText, reconcile } from "../dom.js";

const STATUSES = ["acked", "failed", "pending", "unacknowledged", "lost"];
const REFRESH_MS = 1000;      // a filtered page follows the run at most once a second

export function createLedger(app) {
  const select = (label, id) => h("select", { "aria-label": label, id, onchange: () => { page = 0; ask(); } });
  const status = select("ledger status", "ledger-status");
  const producer = select("ledger producer", "ledger-producer");
  const partition = select("ledger partition", "ledger-partition");
  const error = select("ledger error", "ledger-error");
  status.replaceChildren(h("option", { value: "", text: "any status" }), ...STATUSES.map(s => h("option", { value: s, text: s })));
  const newer = h("button.small", { type: "button", text: "◀ newer", id: "ledger-newer", onclick: () => { page = Math.max(0, page - 1); ask(); } });
  const older = h("button.small", { type: "button", text: "older ▶", id: "ledger-older", onclick: () => { page += 1; ask(); } });
  const summary = h("span.dim.small", { id: "ledger-summary" });
  const body = h("tbody");
  const el = h("div.ledger", null,
    h("div.form.ledger-filters", null, status, producer, partition, error, newer, older, summary),
    h("table.grid#ledger", null, h("thead", null, h("tr", null,
      ...["record", "producer", "partition@offset", "acks", "outcome", "sent", "acked"].map(t => h("th", { text: t })))), body));

  let page = 0, asked = null, askedAt = 0, reply = null, store = null;

  function filters() {
    const f = { status: status.value, producer: producer.value, partition: partition.value, error: error.value };
    for (const k of Object.keys(f)) if (!f[k]) delete f[k];
    return f;
  }
  const filtered = () => page > 0 || Object.keys(filters()).length > 0;

  // the server's answer for these filters and this page (live); null while none has come
  async function ask() {
    if (!store) return;
    const key = JSON.stringify([filters(), page, store.run]);
    asked = key; askedAt = performance.now();
    if (!filtered()) { reply = null; draw(); return; }
    const r = await app.request("ledger", { ...filters(), page });
    if (asked !== key) return;           // a newer question was asked meanwhile
    reply = r && r.ok ? r : { local: true };
    draw();
  }

  function fillOptions(sel, values, anyText) {
    const key = values.join("\u0000");
    if (sel.__k === key) return;
    sel.__k = key;
    const keep = sel.value;
    sel.replaceChildren(h("option", { value: "", text: anyText }), ...values.map(v => h("option", { value: v, text: v })));
    sel.value = values.includes(keep) ? keep : "";
  }

  function localRows() {
    const f = filters();
    return (store.ledger || []).slice().reverse().filter(x => {
      const [, prod, topic, part, , st, err, , , , lost] = x;
      if (f.status && (f.status === "lost" ? !lost : st !== f.status)) return false;
      if (f.producer && prod !== f.producer) return false;
      if (f.error && err !== f.error) return false;
      return !(f.partition && (part === null || `${topic}-${part}` !== f.partition));
    });
  }

  function draw() {
    let rows, note;
    if (!filtered()) { rows = (store.ledger || []).slice().reverse(); note = `newest ${rows.length} record(s)`; }
    else if (reply && !reply.local) {
      rows = reply.rows;
      const from = reply.page * 50;
      note = reply.matched ? `${from + 1}–${from + rows.length} of ${reply.matched} matching` : "no record matches";
      if (reply.scanned >= 50000) note += " (among the newest 50000)";
    } else if (reply && reply.local) { rows = localRows(); note = `${rows.length} of the newest ${(store.ledger || []).length} match`; }
    else { rows = []; note = "asking…"; }
    setText(summary, note);
    newer.disabled = page === 0;
    older.disabled = !(reply && !reply.local && (reply.page + 1) * 50 < reply.matched);
    const hl = store.ui.highlight.records;
    reconcile(body, rows, x => x[0], () => h("tr"), (tr, x) => {
      const [id, prod, topic, part, acks, st, err, offset, sent, acked, lost] = x;
      const key = JSON.stringify(x) + hl.has(id);
      if (tr.__k === key) return;
      tr.__k = key;
      tr.className = hl.has(id) ? "hl" : "";
      // where the record sits, for the click that shows it on its partition's axis (axisinput.js):
      // rows of a filtered page come from the server and are not in the frame's ledger
      tr.dataset.record = id;
      tr.dataset.partition = part === null ? "" : `${topic}-${part}`;
      tr.dataset.offset = offset === null ? "" : String(offset);
      // a lost record was acknowledged first: say both, and never print an absent error
      const outcome = h("td", null, h("span.status." + st, { text: st === "failed" && err ? err : st, title: st }),
        lost ? h("span.status.lost", { text: "LOST", title: "acknowledged, but not in the current leader's log" }) : null);
      tr.replaceChildren(h("td", { text: id }), h("td", { text: prod }),
        h("td", { text: `${topic}-${part === null ? "?" : part}@${offset === null ? "–" : offset}` }),
        h("td", { text: acks }), outcome, h("td", { text: sent === null ? "–" : (sent / 1000).toFixed(3) }),
        h("td", { text: acked === null ? "–" : (acked / 1000).toFixed(3) }));
    });
  }

  function render(s) {
    store = s;
    const r = s.records || { errors: {}, by_producer: {} };
    fillOptions(producer, Object.keys(r.by_producer || {}).sort(), "any producer");
    fillOptions(partition, Array.from(s.partitions.keys()).sort(), "any partition");
    fillOptions(error, Object.keys(r.errors || {}).sort(), "any error");
    const key = JSON.stringify([filters(), page, s.run]);
    if (filtered() && (asked !== key || performance.now() - askedAt > REFRESH_MS)) { ask(); return; }
    draw();
  }

  return { el, render };
}

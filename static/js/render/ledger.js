// The record ledger: what happened to each record, newest first, with filters (status, producer,
// partition, Kafka error) and pages. Every frame carries only the newest 30 records; a filter
// or an older page asks the room for its rows (the "ledger" request), so a filter finds a record
// that is long out of the frame. A replay cannot ask, and filters the rows its frames carry.
import { h, setText, reconcile } from "../dom.js";
import { t, known, N_ } from "../i18n.js";

// a status is the ledger's value (the filter sends it); its word on screen is the catalog's
const STATUSES = [N_("acked"), N_("failed"), N_("pending"), N_("unacknowledged"), N_("lost")];
const REFRESH_MS = 1000;      // a filtered page follows the run at most once a second

export function createLedger(app) {
  const select = (label, id) => h("select", { "aria-label": label, id, onchange: () => { page = 0; ask(); } });
  const status = select(t("ledger status"), "ledger-status");
  const producer = select(t("ledger producer"), "ledger-producer");
  const partition = select(t("ledger partition"), "ledger-partition");
  const error = select(t("ledger error"), "ledger-error");
  status.replaceChildren(h("option", { value: "", text: t("any status") }), ...STATUSES.map(s => h("option", { value: s, text: known(s) })));
  const newer = h("button.small", { type: "button", text: t("◀ newer"), id: "ledger-newer", onclick: () => { page = Math.max(0, page - 1); ask(); } });
  const older = h("button.small", { type: "button", text: t("older ▶"), id: "ledger-older", onclick: () => { page += 1; ask(); } });
  const summary = h("span.dim.small", { id: "ledger-summary" });
  const body = h("tbody");
  const el = h("div.ledger", null,
    h("div.form.ledger-filters", null, status, producer, partition, error, newer, older, summary),
    h("table.grid#ledger", null, h("thead", null, h("tr", null,
      ...[t("record"), t("producer"), t("partition@offset"), "acks", t("outcome"), t("sent"), t("acked")].map(x => h("th", { text: x })))), body));

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
    if (!filtered()) { rows = (store.ledger || []).slice().reverse(); note = t("newest {n} record(s)", { n: rows.length }); }
    else if (reply && !reply.local) {
      rows = reply.rows;
      const from = reply.page * 50;
      note = reply.matched ? t("{first}–{last} of {n} matching", { first: from + 1, last: from + rows.length, n: reply.matched }) : t("no record matches");
      if (reply.scanned >= 50000) note += t(" (among the newest {n})", { n: 50000 });
    } else if (reply && reply.local) { rows = localRows(); note = t("{n} of the newest {total} match", { n: rows.length, total: (store.ledger || []).length }); }
    else { rows = []; note = t("asking…"); }
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
      const outcome = h("td", null, h("span.status." + st, { text: st === "failed" && err ? err : known(st), title: known(st) }),
        lost ? h("span.status.lost", { text: t("LOST"), title: t("acknowledged, but not in the current leader's log") }) : null);
      tr.replaceChildren(h("td", { text: id }), h("td", { text: prod }),
        h("td", { text: `${topic}-${part === null ? "?" : part}@${offset === null ? "–" : offset}` }),
        h("td", { text: acks }), outcome, h("td", { text: sent === null ? "–" : (sent / 1000).toFixed(3) }),
        h("td", { text: acked === null ? "–" : (acked / 1000).toFixed(3) }));
    });
  }

  function render(s) {
    store = s;
    const r = s.records || { errors: {}, by_producer: {} };
    fillOptions(producer, Object.keys(r.by_producer || {}).sort(), t("any producer"));
    fillOptions(partition, Array.from(s.partitions.keys()).sort(), t("any partition"));
    fillOptions(error, Object.keys(r.errors || {}).sort(), t("any error"));
    const key = JSON.stringify([filters(), page, s.run]);
    if (filtered() && (asked !== key || performance.now() - askedAt > REFRESH_MS)) { ask(); return; }
    draw();
  }

  return { el, render };
}

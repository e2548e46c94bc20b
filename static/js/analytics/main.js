// The analytics pages: the sweep list (index.js) and one sweep's report (here).
// State lives in the URL (?m1=&m2=&x=&y=&scale=&cell=&f.<axis>=), so every view can be shared by link.
import { faultWarning, showFaultWarning } from "./faults.js";
import { METRICS, UNTESTED, faultsText, format, layout, renderHeatmap, settingText, untested } from "./heatmap.js";
import { renderHistogram } from "./histogram.js";
import { index } from "./index.js";
import { showStatus, sweepStatus } from "./status.js";
import { $, getJSON, link, td } from "./util.js";
import { t } from "../i18n.js";

const sweepId = document.body.dataset.sweepId;
const KAFKA_GROUP = t("Kafka's own metrics (MBean names, read every 100 ms)");

// -- one sweep's report -------------------------------------------------------------------------------------
const params = new URLSearchParams(location.search);
let report = null;

function state() {
  return {
    m1: params.get("m1") in METRICS ? params.get("m1") : "p_loss",
    m2: params.get("m2") in METRICS ? params.get("m2") : "offline_fraction",
    x: params.get("x"), y: params.get("y"),
    cell: params.has("cell") ? Number(params.get("cell")) : null,
    scale: params.get("scale") === "log" ? "log" : "linear",
  };
}

function setParam(key, value) {
  if (value === null || value === undefined || value === "") params.delete(key); else params.set(key, value);
  history.replaceState(null, "", `${location.pathname}?${params.toString()}`);
}

function options(select, items, current) {
  select.replaceChildren();
  const groups = new Map();          // an item's third element names its <optgroup>
  for (const [value, label, group] of items) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    if (value === current) o.selected = true;
    if (!group) { select.appendChild(o); continue; }
    if (!groups.has(group)) {
      const g = document.createElement("optgroup");
      g.label = group;
      groups.set(group, g);
      select.appendChild(g);
    }
    groups.get(group).appendChild(o);
  }
}

async function loadReport() {
  const { status, body } = await getJSON(`/analytics/api/sweeps/${encodeURIComponent(sweepId)}`);
  if (status !== 200) {
    $("#report-facts").textContent = body.error?.message || t("not found");
    return;
  }
  report = body;
  $("#page-title").textContent = `${body.sweep.name} — ${body.sweep.id}`;
  document.querySelectorAll(".sweep-id").forEach((n) => { n.textContent = body.sweep.id; });
  const s = body.sweep;
  $("#report-facts").textContent = t("{runs} runs · {cells} cells · {seeds} seeds each · ", { runs: s.runs_total, cells: s.cells, seeds: body.seeds.count })
    + faultsText(s.faults_drawn ?? 0);
  showFaultWarning($("#fault-warning"), faultWarning(s, body.cells));
  const shown = sweepStatus(s, body.analysed, body.job);
  showStatus($("#sweep-status"), shown);
  $("#not-analysed").hidden = shown.state !== "not-analysed";
  $("#analyze-button").hidden = shown.state === "running";
  if (shown.state === "running") setTimeout(loadReport, 2000);
  draw();
}

function draw() {
  const st = state();
  const axes = report.axes.filter(([, vals]) => vals.length > 0);
  const names = axes.map(([n]) => n);
  const multi = axes.filter(([, v]) => v.length > 1).map(([n]) => n);
  const x = names.includes(st.x) ? st.x : multi[1] ?? multi[0] ?? null;
  const y = names.includes(st.y) && st.y !== x ? st.y : multi.find((n) => n !== x) ?? null;
  options($("#axis-x"), [["", "—"], ...names.map((n) => [n, n])], x ?? "");
  options($("#axis-y"), [["", "—"], ...names.map((n) => [n, n])], y ?? "");
  const filters = {};
  const box = $("#filters");
  box.replaceChildren();
  for (const [name, vals] of axes) {
    if (name === x || name === y) continue;
    const key = `f.${name}`;
    const wanted = params.get(key);
    const pick = vals.find((v) => settingText(v) === wanted) ?? vals[0];
    filters[name] = pick;
    if (vals.length < 2) continue;
    const label = document.createElement("label");
    label.textContent = `${name} `;
    const sel = document.createElement("select");
    options(sel, vals.map((v) => [settingText(v), settingText(v)]), settingText(pick));
    sel.addEventListener("change", () => { setParam(key, sel.value); draw(); });
    label.appendChild(sel);
    box.appendChild(label);
  }
  const grid = layout(report.cells, axes, x, y, filters);
  const metricItems = Object.entries(METRICS).map(([k, m]) =>
    [k, m.label, m.group === "kafka" ? KAFKA_GROUP : null]);
  options($("#metric-1"), metricItems, st.m1);
  options($("#metric-2"), metricItems, st.m2);
  const pick = (cellId) => { setParam("cell", cellId); draw(); };
  $("#scale").value = st.scale;
  renderHeatmap($("#map-1"), grid, st.m1, x, y, st.cell, pick, st.scale);
  renderHeatmap($("#map-2"), grid, st.m2, x, y, st.cell, pick, st.scale);
  const cell = report.cells.find((c) => c.cell_id === st.cell);
  if (cell) showCell(cell); else $("#cell-view").hidden = true;
}

function fact(box, value, label) {
  const d = document.createElement("div");
  d.className = "fact";
  const b = document.createElement("b");
  b.textContent = value;
  const s = document.createElement("span");
  s.textContent = label;
  d.append(b, s);
  box.appendChild(d);
}

async function showCell(cell) {
  $("#cell-view").hidden = false;
  $("#cell-title").textContent = cell.label;
  const m = cell.metrics;
  const facts = $("#cell-facts");
  facts.replaceChildren();
  fact(facts, untested(cell) ? t("untested") : `${cell.faults}`,
    untested(cell) ? UNTESTED : t("faults drawn in {n} run(s)", { n: cell.runs_stored }));
  if (m) {
    fact(facts, `${format(m.p_loss, "pct")} (${format(m.p_loss_lo, "pct")}–${format(m.p_loss_hi, "pct")})`, t("runs losing acked records: {lost}/{n}", { lost: m.runs_lost, n: m.runs }));
    fact(facts, format(m.lost_mean, "num"), t("lost records per run (max {max})", { max: m.lost_max ?? "–" }));
    fact(facts, format(m.offline_fraction, "pct"), t("partition time offline (max {max} per run)", { max: format(m.offline_ms_max, "ms") }));
    fact(facts, format(m.under_min_isr_fraction, "pct"), t("partition time under min ISR"));
    fact(facts, format(m.ner_rate, "pct"), t("NOT_ENOUGH_REPLICAS answers per record sent (retries count again)"));
    fact(facts, `${format(m.detect_ms_p50, "ms")} / ${format(m.detect_ms_p95, "ms")}`, t("detection p50 / p95 ({n} faults)", { n: m.detect_samples }));
    fact(facts, `${format(m.failover_ms_p50, "ms")} / ${format(m.failover_ms_p95, "ms")}`, t("failover p50 / p95 ({n} faults)", { n: m.failover_samples }));
    fact(facts, `${format(m.latency_p50_ms, "ms")} / ${format(m.latency_p99_ms, "ms")}`, t("produce latency p50 / p99"));
    fact(facts, format(m.isr_churn_mean, "num"), t("ISR changes per run"));
    fact(facts, `${m.nonconverged}`, t("runs not converged after healing"));
    if (m.km_runs) {
      // Kafka's own metrics (MBean names), read every 100 ms of each run (docs/model.md §22.7)
      fact(facts, format(m.km_under_min_isr_ms_mean, "ms"), t("UnderMinIsrPartitionCount > 0, per run"));
      fact(facts, format(m.km_offline_ms_mean, "ms"), t("OfflinePartitionsCount > 0, per run (peak {peak})", { peak: m.km_offline_max ?? "–" }));
      fact(facts, format(m.km_unclean_elections_mean, "num"), t("UncleanLeaderElectionsPerSec count, per run"));
      fact(facts, `${m.km_max_lag_peak ?? "–"}`, t("peak MaxLag (messages)"));
      fact(facts, format(m.km_record_errors_mean, "num"), t("producer record errors (record-error-total), per run"));
      fact(facts, format(m.km_no_controller_ms_mean, "ms"), t("ActiveControllerCount 0, per run"));
    }
    if (m.runs_invalid || m.runs_error) fact(facts, `${m.runs_invalid} / ${m.runs_error}`, t("runs invalid / engine errors"));
  } else {
    fact(facts, `${cell.runs_stored}`, t("runs stored (not analysed yet)"));
  }
  const d = cell.distributions || {};
  renderHistogram($("#chart-detect"), d.detect_ms);
  renderHistogram($("#chart-failover"), d.failover_ms);
  renderHistogram($("#chart-offline"), d.offline_ms);
  renderHistogram($("#chart-latency"), d.latency_ms);
  const inv = $("#cell-invariants");
  inv.replaceChildren();
  if (!cell.invariants.length) inv.textContent = t("none");
  for (const i of cell.invariants) {
    const row = document.createElement("div");
    row.textContent = t("{invariant}: {runs} run(s), {n} time(s)", { invariant: i.invariant, runs: i.runs, n: i.occurrences });
    inv.appendChild(row);
  }
  const { body } = await getJSON(`/analytics/api/sweeps/${encodeURIComponent(sweepId)}/cells/${cell.cell_id}/runs?limit=15`);
  const tbody = $("#runs-table tbody");
  tbody.replaceChildren();
  for (const r of body.runs || []) {
    const tr = document.createElement("tr");
    if (r.lost > 0) tr.className = "bad";
    td(tr, r.worst_rank ?? "", "num");
    td(tr, r.seed, "num");
    td(tr, r.lost, "num");
    td(tr, r.violations, "num");
    td(tr, r.offline_ms !== undefined ? format(r.offline_ms, "ms") : "–", "num");
    td(tr, r.under_min_isr_ms !== undefined ? format(r.under_min_isr_ms, "ms") : "–", "num");
    td(tr, r.unclean_elections ?? "–", "num");
    td(tr, r.converged ? t("yes") : t("no"));
    td(tr, link(r.replay, t("replay ▶"), "replay"));
    tbody.appendChild(tr);
  }
}

function wireReport() {
  $("#report-view").hidden = false;
  $("#axis-x").addEventListener("change", (e) => { setParam("x", e.target.value); draw(); });
  $("#axis-y").addEventListener("change", (e) => { setParam("y", e.target.value); draw(); });
  $("#metric-1").addEventListener("change", (e) => { setParam("m1", e.target.value); draw(); });
  $("#metric-2").addEventListener("change", (e) => { setParam("m2", e.target.value); draw(); });
  $("#scale").addEventListener("change", (e) => { setParam("scale", e.target.value === "log" ? "log" : ""); draw(); });
  $("#share-button").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText(location.href); $("#share-button").textContent = t("Link copied"); }
    catch { window.prompt(t("Link to this view:"), location.href); }
  });
  $("#analyze-button").addEventListener("click", async () => {
    const { status, body } = await getJSON(`/analytics/api/sweeps/${encodeURIComponent(sweepId)}/analyze`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    if (status === 202) loadReport();
    else $("#report-facts").textContent = body.error?.message || t("failed");
  });
  loadReport();
}

if (sweepId) wireReport(); else index();

// The analytics pages: the sweep list with a form to start one, and one sweep's report.
// State lives in the URL (?m1=&m2=&x=&y=&cell=&f.<axis>=), so every view can be shared by link.
import { METRICS, format, layout, renderHeatmap, renderHistogram, settingText } from "./heatmap.js";

const $ = (sel) => document.querySelector(sel);
const sweepId = document.body.dataset.sweepId;

const EXAMPLE = {
  name: "min ISR and truncation era",
  grid: { kafka_version: ["0.10", "2.6"], acks: ["1", "all"], "min.insync.replicas": [1, 2] },
  base: {
    brokers: 3, duration_ms: 60000,
    topics: [{ name: "t", partitions: 3, replication_factor: 3 }],
    clients: [{ name: "p1", type: "producer", topic: "t", rate_per_s: 100 }],
  },
  seeds: 25,
  faults: "default",
};

async function getJSON(url, options) {
  const res = await fetch(url, options);
  const body = await res.json().catch(() => ({ ok: false, error: { message: res.statusText } }));
  return { status: res.status, body };
}

function td(tr, content, cls) {
  const cell = document.createElement("td");
  if (content instanceof Node) cell.appendChild(content); else cell.textContent = content ?? "";
  if (cls) cell.className = cls;
  tr.appendChild(cell);
  return cell;
}

function link(href, label, cls) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = label;
  if (cls) a.className = cls;
  return a;
}

function showJob(box, job, stored) {
  if (!job) { box.hidden = true; return; }
  box.hidden = false;
  const p = job.progress;
  const done = p ? p.done : stored?.runs_done ?? 0;
  const total = p ? p.total : stored?.runs_total ?? 0;
  box.querySelector(".an-bar-fill").style.width = total ? `${(100 * done) / total}%` : "0%";
  let line = `${job.kind} ${job.sweep_id}: ${job.state}`;
  if (total) line += ` — ${done}/${total} runs`;
  else if (p && p.stage) line += ` — ${p.stage}…`;
  if (p && p.rate_per_s) line += `, ${p.rate_per_s.toFixed(1)} runs/s`;
  if (p && p.eta_s !== null && p.eta_s !== undefined && done < total) line += `, ${Math.ceil(p.eta_s)} s left`;
  if (job.errors && job.errors.length && job.state === "failed") line += ` — ${job.errors[job.errors.length - 1]}`;
  box.querySelector(".an-job-text").textContent = line;
}

// -- the index -----------------------------------------------------------------------------------------------
async function index() {
  $("#index-view").hidden = false;
  $("#sweep-doc").value = JSON.stringify(EXAMPLE, null, 2);
  $("#sweep-form").addEventListener("submit", startSweep);
  await refreshIndex();
  loadQuestions();
}

async function refreshIndex() {
  const { body } = await getJSON("/analytics/api/sweeps");
  const tbody = $("#sweeps-table tbody");
  tbody.replaceChildren();
  for (const s of body.sweeps || []) {
    const tr = document.createElement("tr");
    const name = document.createElement("span");
    name.appendChild(link(`/analytics/${encodeURIComponent(s.id)}`, s.name));
    const id = document.createElement("div");
    id.className = "dim small";
    id.textContent = `${s.id} · ${s.cells} cells`;
    name.appendChild(id);
    td(tr, name);
    td(tr, `${s.runs_done}/${s.runs_total}`, "num");
    td(tr, s.status + (s.message ? `: ${s.message}` : ""));
    td(tr, link(`/analytics/${encodeURIComponent(s.id)}`, "report →"));
    tbody.appendChild(tr);
  }
  $("#no-sweeps").hidden = (body.sweeps || []).length > 0;
  showJob($("#job"), body.job);
  if (body.job) setTimeout(refreshIndex, 1500);
}

async function startSweep(event) {
  event.preventDefault();
  const msg = $("#form-message");
  msg.className = "small";
  let doc;
  try {
    doc = JSON.parse($("#sweep-doc").value);
  } catch (e) {
    msg.className = "small error";
    msg.textContent = `Not valid JSON: ${e.message}`;
    return;
  }
  const { status, body } = await getJSON("/analytics/api/sweeps", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(doc),
  });
  if (status !== 202) {
    msg.className = "small error";
    const e = body.error || {};
    msg.textContent = `${e.field ? e.field + ": " : ""}${e.message || "failed"}${e.allowed ? ` (allowed: ${e.allowed})` : ""}`;
    return;
  }
  msg.textContent = "Started: ";
  msg.appendChild(link(body.report, `open the report of ${body.sweep_id}`));
  refreshIndex();
}

async function loadQuestions() {
  const { body } = await getJSON("/analytics/api/questions");
  const qs = body.questions || [];
  if (!qs.length) return;
  const box = $("#questions");
  box.replaceChildren();
  for (const q of qs) {
    const p = document.createElement("p");
    const b = document.createElement("b");
    b.textContent = q.label;
    p.appendChild(b);
    const line = document.createElement("div");
    line.textContent = `${q.broken} of ${q.runs} stored runs break it (${q.broken_before} as stored)` +
      (q.exact !== null ? `; ${q.exact} replays verified exact` : "") + (q.errors ? `; ${q.errors} errors` : "");
    p.appendChild(line);
    for (const g of q.groups.slice(0, 12)) {
      const row = document.createElement("div");
      row.className = "dim";
      row.textContent = `${g.group_key}: ${g.broken}/${g.runs} (${format(g.p_broken, "pct")}, 95% ${format(g.p_broken_lo, "pct")}–${format(g.p_broken_hi, "pct")})`;
      p.appendChild(row);
    }
    box.appendChild(p);
  }
}

// -- one sweep's report -------------------------------------------------------------------------------------
const params = new URLSearchParams(location.search);
let report = null;

function state() {
  return {
    m1: params.get("m1") in METRICS ? params.get("m1") : "p_loss",
    m2: params.get("m2") in METRICS ? params.get("m2") : "offline_fraction",
    x: params.get("x"), y: params.get("y"),
    cell: params.has("cell") ? Number(params.get("cell")) : null,
  };
}

function setParam(key, value) {
  if (value === null || value === undefined || value === "") params.delete(key); else params.set(key, value);
  history.replaceState(null, "", `${location.pathname}?${params.toString()}`);
}

function options(select, items, current) {
  select.replaceChildren();
  for (const [value, label] of items) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    if (value === current) o.selected = true;
    select.appendChild(o);
  }
}

async function loadReport() {
  const { status, body } = await getJSON(`/analytics/api/sweeps/${encodeURIComponent(sweepId)}`);
  if (status !== 200) {
    $("#report-status").textContent = body.error?.message || "not found";
    return;
  }
  report = body;
  $("#page-title").textContent = `${body.sweep.name} — ${body.sweep.id}`;
  document.querySelectorAll(".sweep-id").forEach((n) => { n.textContent = body.sweep.id; });
  const s = body.sweep;
  $("#report-status").textContent = `${s.runs_done}/${s.runs_total} runs · ${s.cells} cells · ${body.seeds.count} seeds each · ${s.status}`;
  $("#not-analysed").hidden = body.analysed;
  $("#analyze-button").hidden = s.status === "running";
  showJob($("#report-job"), body.job && body.job.state === "running" ? body.job : null, s);
  if (s.status === "running" || (body.job && body.job.state === "running")) setTimeout(loadReport, 2000);
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
  const metricItems = Object.entries(METRICS).map(([k, m]) => [k, m.label]);
  options($("#metric-1"), metricItems, st.m1);
  options($("#metric-2"), metricItems, st.m2);
  const pick = (cellId) => { setParam("cell", cellId); draw(); };
  renderHeatmap($("#map-1"), grid, st.m1, x, y, st.cell, pick);
  renderHeatmap($("#map-2"), grid, st.m2, x, y, st.cell, pick);
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
  if (m) {
    fact(facts, `${format(m.p_loss, "pct")} (${format(m.p_loss_lo, "pct")}–${format(m.p_loss_hi, "pct")})`, `runs losing acked records: ${m.runs_lost}/${m.runs}`);
    fact(facts, format(m.lost_mean, "num"), `lost records per run (max ${m.lost_max ?? "–"})`);
    fact(facts, format(m.offline_fraction, "pct"), `partition time offline (max ${format(m.offline_ms_max, "ms")} per run)`);
    fact(facts, format(m.under_min_isr_fraction, "pct"), "partition time under min ISR");
    fact(facts, format(m.ner_rate, "pct"), "NOT_ENOUGH_REPLICAS answers per record sent (retries count again)");
    fact(facts, `${format(m.detect_ms_p50, "ms")} / ${format(m.detect_ms_p95, "ms")}`, `detection p50 / p95 (${m.detect_samples} faults)`);
    fact(facts, `${format(m.failover_ms_p50, "ms")} / ${format(m.failover_ms_p95, "ms")}`, `failover p50 / p95 (${m.failover_samples} faults)`);
    fact(facts, `${format(m.latency_p50_ms, "ms")} / ${format(m.latency_p99_ms, "ms")}`, "produce latency p50 / p99");
    fact(facts, format(m.isr_churn_mean, "num"), "ISR changes per run");
    fact(facts, `${m.nonconverged}`, "runs not converged after healing");
    if (m.runs_invalid || m.runs_error) fact(facts, `${m.runs_invalid} / ${m.runs_error}`, "runs invalid / engine errors");
  } else {
    fact(facts, `${cell.runs_stored}`, "runs stored (not analysed yet)");
  }
  const d = cell.distributions || {};
  renderHistogram($("#chart-detect"), d.detect_ms);
  renderHistogram($("#chart-failover"), d.failover_ms);
  renderHistogram($("#chart-offline"), d.offline_ms);
  renderHistogram($("#chart-latency"), d.latency_ms);
  const inv = $("#cell-invariants");
  inv.replaceChildren();
  if (!cell.invariants.length) inv.textContent = "none";
  for (const i of cell.invariants) {
    const row = document.createElement("div");
    row.textContent = `${i.invariant}: ${i.runs} run(s), ${i.occurrences} time(s)`;
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
    td(tr, r.converged ? "yes" : "no");
    td(tr, link(r.replay, "replay ▶", "replay"));
    tbody.appendChild(tr);
  }
}

function wireReport() {
  $("#report-view").hidden = false;
  $("#axis-x").addEventListener("change", (e) => { setParam("x", e.target.value); draw(); });
  $("#axis-y").addEventListener("change", (e) => { setParam("y", e.target.value); draw(); });
  $("#metric-1").addEventListener("change", (e) => { setParam("m1", e.target.value); draw(); });
  $("#metric-2").addEventListener("change", (e) => { setParam("m2", e.target.value); draw(); });
  $("#share-button").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText(location.href); $("#share-button").textContent = "Link copied"; }
    catch { window.prompt("Link to this view:", location.href); }
  });
  $("#analyze-button").addEventListener("click", async () => {
    const { status, body } = await getJSON(`/analytics/api/sweeps/${encodeURIComponent(sweepId)}/analyze`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    $("#report-status").textContent = status === 202 ? "analysis started…" : body.error?.message || "failed";
    if (status === 202) setTimeout(loadReport, 2000);
  });
  loadReport();
}

if (sweepId) wireReport(); else index();

// The sweeps page: the list of sweeps (one status each), questions asked of every stored run and
// the form that starts a sweep. Text from the server goes into the page with textContent only.
import { format } from "./heatmap.js";
import { EXAMPLE, FormError, buildDocument, fieldsOf } from "./form.js";
import { showStatus, sweepStatus } from "./status.js";
import { $, getJSON, link, td } from "./util.js";
import { clearFieldErrors, showFieldError } from "../fielderrors.js";
import { t } from "../i18n.js";

let kinds = {};            // axis -> kind of its values ("int", "bool", "text" or choices)
let axisNames = [];
let mode = "fields";       // which tab the form submits: "fields" or "json"

const FIELDS = { name: "#f-name", brokers: "#f-brokers", partitions: "#f-partitions", rf: "#f-rf", rate: "#f-rate",
  duration_s: "#f-duration", seeds: "#f-seeds", first_seed: "#f-first-seed", faults: "#f-faults" };

function kindHint(kind) {
  if (Array.isArray(kind)) return kind.join(", ");
  return kind === "int" ? t("integers, e.g. 1, 2") : kind === "bool" ? "true, false" : t("names, e.g. default, none");
}

function axisRow(name = "", values = "") {
  const row = document.createElement("div");
  row.className = "an-axis";
  const sel = document.createElement("select");
  sel.className = "axis-name";
  sel.setAttribute("aria-label", t("axis"));
  for (const n of ["", ...axisNames]) {
    const o = document.createElement("option");
    o.value = n;
    o.textContent = n || t("— axis —");
    sel.appendChild(o);
  }
  sel.value = name;
  const input = document.createElement("input");
  input.type = "text";
  input.className = "axis-values";
  input.setAttribute("aria-label", t("values, comma-separated"));
  input.value = values;
  const hint = () => { input.placeholder = sel.value ? kindHint(kinds[sel.value]) : t("values, comma-separated"); };
  sel.addEventListener("change", () => { hint(); summary(); });
  input.addEventListener("input", summary);
  hint();
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "ghost small";
  remove.textContent = t("remove");
  remove.addEventListener("click", () => { row.remove(); summary(); });
  row.append(sel, input, remove);
  return row;
}

function readFields() {
  const f = Object.fromEntries(Object.entries(FIELDS).map(([k, sel]) => [k, $(sel).value]));
  f.axes = [...document.querySelectorAll("#f-axes .an-axis")].map((r) =>
    [r.querySelector(".axis-name").value, r.querySelector(".axis-values").value]);
  return f;
}

function fillFields(f) {
  for (const [k, sel] of Object.entries(FIELDS)) $(sel).value = f[k];
  $("#f-axes").replaceChildren(...f.axes.map(([n, v]) => axisRow(n, v)));
  summary();
}

// the input a document path names (a FormError's or the server's field), or null
const PATHS = { name: "#f-name", "base.brokers": "#f-brokers", "base.partitions": "#f-partitions",
  "base.topics[0].partitions": "#f-partitions", "base.replication_factor": "#f-rf", "base.topics[0].replication_factor": "#f-rf",
  "base.rate_per_s": "#f-rate", "base.clients[0].rate_per_s": "#f-rate", "base.duration_ms": "#f-duration",
  seeds: "#f-seeds", "seeds.count": "#f-seeds", "seeds.first": "#f-first-seed", faults: "#f-faults" };
function inputOf(field) {
  if (!field) return null;
  const axis = /^grid\.(.+?)(\[\d+\])?$/.exec(field);
  if (axis) {
    const row = [...document.querySelectorAll("#f-axes .an-axis")].find((r) => r.querySelector(".axis-name").value === axis[1]);
    return row ? row.querySelector(".axis-values") : null;
  }
  return PATHS[field] ? $(PATHS[field]) : null;
}

/** One error of the fields, beside the field it names; true when it found its field. */
function showError(field, message) {
  clearFieldErrors($("#fields-view"));
  const input = inputOf(field);
  if (input) showFieldError(input, message, field);
  return Boolean(input);
}

// "8 cells × 25 seeds = 200 runs" under the fields; what is wrong with them shows beside the field
function summary() {
  const out = $("#f-summary");
  try {
    const doc = buildDocument(readFields(), kinds);
    clearFieldErrors($("#fields-view"));
    const cells = Object.values(doc.grid).reduce((n, vals) => n * vals.length, 1);
    const seeds = typeof doc.seeds === "object" ? doc.seeds.count : doc.seeds;
    out.textContent = t("{cells} cell(s) × {seeds} seed(s) = {runs} runs", { cells, seeds, runs: cells * seeds });
  } catch (e) {
    if (!(e instanceof FormError)) throw e;
    out.textContent = showError(e.field, e.detail) ? "" : e.message;
  }
}

function setMode(next) {
  const msg = $("#form-message");
  msg.textContent = "";
  if (next === "json" && mode === "fields") {
    try { $("#sweep-doc").value = JSON.stringify(buildDocument(readFields(), kinds), null, 2); }
    catch (e) { if (!(e instanceof FormError)) throw e; }       // keep the last JSON; the summary says why
  } else if (next === "fields" && mode === "json") {
    let f = null;
    try { f = fieldsOf(JSON.parse($("#sweep-doc").value)); } catch { f = null; }
    if (!f) {
      msg.className = "small error";
      msg.textContent = t("This document has parts the form cannot show: edit it here.");
      return;
    }
    fillFields(f);
  }
  mode = next;
  $("#fields-view").hidden = mode !== "fields";
  $("#json-view").hidden = mode !== "json";
  $("#tab-fields").setAttribute("aria-selected", String(mode === "fields"));
  $("#tab-json").setAttribute("aria-selected", String(mode === "json"));
}

function wireForm(body) {
  kinds = Object.fromEntries(body.axes || []);
  axisNames = (body.axes || []).map(([n]) => n);
  const faults = $("#f-faults");
  for (const p of body.profiles || ["default", "none"]) {
    const o = document.createElement("option");
    o.value = p;
    o.textContent = p;
    faults.appendChild(o);
  }
  fillFields(fieldsOf(EXAMPLE));
  $("#sweep-doc").value = JSON.stringify(EXAMPLE, null, 2);
  $("#f-add-axis").addEventListener("click", () => { $("#f-axes").appendChild(axisRow()); });
  $("#fields-view").addEventListener("input", summary);
  $("#tab-fields").addEventListener("click", () => setMode("fields"));
  $("#tab-json").addEventListener("click", () => setMode("json"));
  $("#sweep-form").addEventListener("submit", startSweep);
}

export async function index() {
  $("#index-view").hidden = false;
  const { body } = await getJSON("/analytics/api/sweeps");
  wireForm(body);
  drawSweeps(body);
  loadQuestions();
}

async function refreshIndex() {
  const { body } = await getJSON("/analytics/api/sweeps");
  drawSweeps(body);
}

function drawSweeps(body) {
  const tbody = $("#sweeps-table tbody");
  tbody.replaceChildren();
  const sweeps = [...(body.sweeps || [])];
  const job = body.job;
  // a sweep whose job is still starting Spark is not stored yet: it gets a row all the same
  if (job && !sweeps.some((s) => s.id === job.sweep_id)) sweeps.unshift({ id: job.sweep_id, name: job.sweep_id, pending: true });
  for (const s of sweeps) {
    const tr = document.createElement("tr");
    tr.dataset.sweep = s.id;
    const name = document.createElement("span");
    name.appendChild(s.pending ? document.createTextNode(s.name) : link(`/analytics/${encodeURIComponent(s.id)}`, s.name));
    const id = document.createElement("div");
    id.className = "dim small";
    id.textContent = s.pending ? s.id : t("{id} · {n} cells", { id: s.id, n: s.cells });
    name.appendChild(id);
    td(tr, name);
    td(tr, s.pending ? "–" : `${s.runs_done}/${s.runs_total}`, "num");
    const box = document.createElement("div");
    showStatus(box, sweepStatus(s.pending ? null : s, s.analysed, job && job.sweep_id === s.id ? job : null));
    td(tr, box, "status");
    td(tr, s.pending ? "" : link(`/analytics/${encodeURIComponent(s.id)}`, t("report →")));
    tbody.appendChild(tr);
  }
  $("#no-sweeps").hidden = sweeps.length > 0;
  if (job) setTimeout(refreshIndex, 1500);
}

async function startSweep(event) {
  event.preventDefault();
  const msg = $("#form-message");
  msg.className = "small";
  let doc;
  msg.textContent = "";
  try {
    doc = mode === "json" ? JSON.parse($("#sweep-doc").value) : buildDocument(readFields(), kinds);
  } catch (e) {
    if (e instanceof FormError) { summary(); return; }     // shown once, beside its field
    msg.className = "small error";
    msg.textContent = t("Not valid JSON: {error}", { error: e.message });
    return;
  }
  const { status, body } = await getJSON("/analytics/api/sweeps", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(doc),
  });
  if (status !== 202) {
    msg.className = "small error";
    const e = body.error || {};
    const words = (e.message || t("failed")) + (e.allowed ? t(" (allowed: {allowed})", { allowed: e.allowed }) : "");
    // in the form, beside the field the server names; in the JSON tab (or a field the form lacks) its path says where
    if (!(mode === "fields" && showError(e.field, words))) msg.textContent = `${e.field ? e.field + ": " : ""}${words}`;
    return;
  }
  msg.textContent = t("Started: ");
  msg.appendChild(link(body.report, t("open the report of {id}", { id: body.sweep_id })));
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
    line.textContent = t("{broken} of {runs} stored runs break it ({before} as stored)", { broken: q.broken, runs: q.runs, before: q.broken_before })
      + (q.exact !== null ? t("; {n} replays verified exact", { n: q.exact }) : "") + (q.errors ? t("; {n} errors", { n: q.errors }) : "");
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

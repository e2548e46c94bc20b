// The runs page: list, search and filter saved runs; rename, delete, export, import; pick two to
// compare. Everything a user typed goes into the page as text (textContent), never as markup.
import { h, setText } from "../dom.js";
import { seconds, errorText } from "../format.js";
import { toast } from "../ui/toast.js";
import { followJob } from "../jobs.js";
import { lang, t } from "../i18n.js";

const PAGE = 50;
const state = { offset: 0, total: 0, selected: new Set(), timer: null, facetsLoaded: false };
const $ = id => document.getElementById(id);

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = typeof body === "string" ? body : JSON.stringify(body); }
  const res = await fetch(url, init);
  let reply;
  try { reply = await res.json(); } catch (e) { reply = { ok: false, error: { message: `${res.status} ${res.statusText}` } }; }
  return reply;
}

function filters() {
  const p = new URLSearchParams();
  for (const id of ["q", "era", "outcome", "scenario"]) { const v = $(id).value.trim(); if (v) p.set(id, v); }
  return p;
}

function when(ms) {
  const d = new Date(ms);
  // a zh-CN page writes its dates in Chinese whatever the browser's own locale; else the browser's
  return d.toLocaleString(lang() === "zh-CN" ? "zh-CN" : undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

async function load() {
  const p = filters();
  p.set("limit", PAGE);
  p.set("offset", state.offset);
  if (!state.facetsLoaded) p.set("facets", "1");
  history.replaceState(null, "", "/runs" + (filters().toString() ? "?" + filters().toString() : ""));
  const reply = await api("GET", "/api/runs?" + p.toString());
  if (!reply.ok) { toast(t("Cannot list runs"), errorText(reply.error), "error"); return; }
  if (reply.facets) { fillFacets(reply.facets); state.facetsLoaded = true; }
  state.total = reply.total;
  render(reply.runs);
}

function fillFacets(f) {
  const era = $("era"), sc = $("scenario");
  const keepEra = era.value, keepSc = sc.value;
  era.replaceChildren(h("option", { value: "", text: t("any") }), ...f.eras.map(([v, n]) => h("option", { value: v, text: `${v} (${n})` })));
  sc.replaceChildren(h("option", { value: "", text: t("any") }), ...f.scenarios.map(([v, n]) => h("option", { value: v, text: `${v} (${n})` })));
  era.value = keepEra; sc.value = keepSc;
}

function outcomeChip(run) {
  const label = run.outcome === "lost" ? t("lost records") : run.outcome === "violations" ? t("violations") : t("clean");
  return h("span", { class: `chip outcome-${run.outcome}`, text: label });
}

function render(runs) {
  const body = document.querySelector("#runs tbody");
  body.replaceChildren(...runs.map(row));
  $("empty").hidden = runs.length > 0;
  setText($("total"), state.total === 1 ? t("1 run") : t("{n} runs", { n: state.total }));
  setText($("page"), state.total ? t("{from}–{to} of {n}", { from: state.offset + 1, to: Math.min(state.offset + PAGE, state.total), n: state.total }) : "");
  $("prev").disabled = state.offset === 0;
  $("next").disabled = state.offset + PAGE >= state.total;
  updateCompare();
}

function row(run) {
  const check = h("input", { type: "checkbox", checked: state.selected.has(run.id), title: t("select for compare"),
    onchange: e => { if (e.target.checked) state.selected.add(run.id); else state.selected.delete(run.id); updateCompare(); } });
  const title = h("a", { href: run.links.page, class: "run-title", text: run.title });
  const tr = h("tr", { dataset: { id: String(run.id) } },
    h("td", {}, check),
    h("td", { class: "title-cell" }, title, run.source !== "headless" ? h("span", { class: "dim small src", text: ` ${run.source}` }) : ""),
    h("td", { text: run.scenario_name }),
    h("td", { class: "mono", text: run.kafka_version }),
    h("td", { class: "mono", text: String(run.seed) }),
    h("td", { class: "dim small", text: when(run.created_ms) }),
    h("td", { class: "mono", text: seconds(run.end_ms) + (run.finished ? "" : t(" (partial)")) }),
    h("td", { class: "mono", text: String(run.acked_count) }),
    h("td", { class: "mono" + (run.lost_count ? " bad" : ""), text: String(run.lost_count) }),
    h("td", { class: "mono" + (run.violations_count ? " bad" : ""), text: String(run.violations_count) }),
    h("td", {}, outcomeChip(run)),
    h("td", { class: "actions" },
      h("button", { type: "button", class: "small ghost", text: t("Rename"), dataset: { act: "rename" }, onclick: () => rename(run, tr) }),
      h("a", { class: "button small ghost", href: `/api/runs/${run.id}/export`, text: t("Export") }),
      h("button", { type: "button", class: "small ghost", text: t("Link"), dataset: { act: "link" }, onclick: () => copy(run.links.short) }),
      h("button", { type: "button", class: "small danger", text: t("Delete"), dataset: { act: "delete" }, onclick: e => remove(run, e.currentTarget) })));
  return tr;
}

function rename(run, tr) {
  const cell = tr.querySelector(".title-cell");
  const input = h("input", { type: "text", value: run.title, maxLength: 200, class: "rename-input", "aria-label": t("new title") });
  const done = async save => {
    if (save) {
      const reply = await api("PATCH", `/api/runs/${run.id}`, { title: input.value });
      if (!reply.ok) { toast(t("Cannot rename"), errorText(reply.error), "error"); input.focus(); return; }
      run.title = reply.title;
      toast(t("Renamed"), reply.title);
    }
    cell.replaceChildren(h("a", { href: run.links.page, class: "run-title", text: run.title }));
  };
  input.addEventListener("keydown", e => { if (e.key === "Enter") done(true); else if (e.key === "Escape") done(false); });
  cell.replaceChildren(input, h("button", { type: "button", class: "small primary", text: t("Save"), dataset: { act: "save-title" }, onclick: () => done(true) }));
  input.focus();
  input.select();
}

async function remove(run, button) {
  if (button.dataset.armed !== "1") {
    button.dataset.armed = "1";
    setText(button, t("Really delete?"));
    setTimeout(() => { button.dataset.armed = ""; setText(button, t("Delete")); }, 4000);
    return;
  }
  const reply = await api("DELETE", `/api/runs/${run.id}`);
  if (!reply.ok) { toast(t("Cannot delete"), errorText(reply.error), "error"); return; }
  state.selected.delete(run.id);
  toast(t("Deleted"), run.title);
  load();
}

function copy(path) {
  const url = location.origin + path;
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(() => toast(t("Link copied"), url));
  else toast(t("Link"), url, "info", 9000);
}

function updateCompare() {
  const b = $("compare-selected");
  b.disabled = state.selected.size !== 2;
  b.title = state.selected.size === 2 ? t("Open the two selected runs side by side") : t("Select two runs to compare");
}

async function importFile(file) {
  if (!file) return;
  const text = await file.text();
  const reply = await followJob(await api("POST", "/api/runs/import", text), t("Importing {name}", { name: file.name }));
  if (!reply.ok) { toast(t("Cannot import"), errorText(reply.error), "error", 9000); return; }
  const differs = reply.history_matches === false ? t(" — its history differs from this engine's re-simulation (the re-simulation was saved)") : "";
  toast(t("Imported"), reply.title + differs);
  state.offset = 0;
  state.facetsLoaded = false;
  load();
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => { state.offset = 0; load(); }, 200);
}

const initial = new URLSearchParams(location.search);
for (const id of ["q", "outcome"]) if (initial.get(id)) $(id).value = initial.get(id);
for (const id of ["era", "scenario"]) if (initial.get(id)) $(id).replaceChildren(h("option", { value: initial.get(id), text: initial.get(id) }));
for (const id of ["era", "scenario"]) if (initial.get(id)) $(id).value = initial.get(id);
$("q").addEventListener("input", schedule);
for (const id of ["era", "outcome", "scenario"]) $(id).addEventListener("change", () => { state.offset = 0; load(); });
$("filters").addEventListener("submit", e => { e.preventDefault(); state.offset = 0; load(); });
$("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); load(); });
$("next").addEventListener("click", () => { state.offset += PAGE; load(); });
$("compare-selected").addEventListener("click", () => {
  const [a, b] = [...state.selected];
  location.href = `/compare?a=${a}&b=${b}`;
});
$("import-file").addEventListener("change", e => importFile(e.target.files[0]));
window.isrlabRuns = { state, load };
load();

// "Can this lose data?": search fault schedules for a run that breaks a property, shrink it and
// open it paused just before the break. Lives in the config editor, next to the settings it tests.
import { h, clear } from "../dom.js";
import { errorText } from "../format.js";
import { t } from "../i18n.js";

const PROPERTIES = [
  ["no_acked_loss", t("no acknowledged record is lost")],
  ["no_acked_all_loss", t("no acks=all record is lost")],
  ["no_violation", t("no invariant is violated")],
  ["max_offline_ms", t("no partition offline longer than … ms")],
  ["no_error", t("no produce fails with NOT_ENOUGH_REPLICAS")],
];

async function currentScenario(app) {
  const r = await fetch(`/api/rooms/${encodeURIComponent(app.store.room)}/scenario.json`);
  if (!r.ok) throw new Error(t("cannot read the current scenario"));
  return r.json();
}

export function searchPanel(app, pendingEdits) {
  const prop = h("select#search-property", null, ...PROPERTIES.map(([v, text]) => h("option", { value: v, text })));
  const offline = h("input", { type: "number", value: 30000, min: 0, style: { width: "90px" } });
  const offlineLabel = h("label", { hidden: true }, "ms ", offline);
  prop.addEventListener("change", () => { offlineLabel.hidden = prop.value !== "max_offline_ms"; });
  const runs = h("input#search-runs", { type: "number", value: 200, min: 1, max: 5000, style: { width: "80px" } });
  const budget = h("input", { type: "number", value: 120, min: 1, max: 900, style: { width: "70px" } });
  const keep = h("input", { type: "checkbox" });
  const status = h("div.search-status", { "aria-live": "polite" });
  const result = h("div.search-result#search-result");
  const start = h("button.primary#search-start", { type: "button", text: t("Can this lose data?") });
  // a search may run for minutes: the one who started it can stop it (it ends between batches)
  const cancel = h("button#search-cancel", { type: "button", text: t("Cancel search"), hidden: true });
  start.onclick = async () => {
    clear(result);
    status.textContent = "";
    let scenario;
    try { scenario = await currentScenario(app); } catch (e) { status.textContent = e.message; return; }
    scenario.config = Object.assign({}, scenario.config, Object.fromEntries(pendingEdits()));
    if (!keep.checked) scenario.timeline = [];
    const property = { name: prop.value };
    if (prop.value === "max_offline_ms") property.param = Number(offline.value);
    if (prop.value === "no_error") property.param = "NOT_ENOUGH_REPLICAS";
    const body = { scenario, property, runs: Number(runs.value), budget_s: Number(budget.value) };
    start.disabled = true;
    status.textContent = t("starting…");
    try {
      const r = await fetch("/api/search", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const job = await r.json();
      if (!r.ok) { status.textContent = errorText(job.error); return; }
      cancel.onclick = () => fetch(`/api/search/${encodeURIComponent(job.id)}`, { method: "DELETE" });
      cancel.hidden = false;
      await poll(job.id, status, result);
    } catch (e) {
      status.textContent = t("search failed: {detail}", { detail: e.message });
    } finally {
      start.disabled = false;
      cancel.hidden = true;
    }
  };
  return h("div.search-panel", null,
    h("h3", { text: t("Can this lose data? Search random fault schedules with these settings") }),
    h("div.form", null, h("label", null, t("property") + " ", prop), offlineLabel,
      h("label", null, t("runs") + " ", runs), h("label", null, t("time budget (s)") + " ", budget),
      h("label", null, keep, " " + t("keep this scenario's timeline")), start, cancel),
    h("p.dim", { text: t("Each run draws crashes (process and power), pauses, partitions, one-way cuts, session expiries and slow links from its seed, then heals everything. A break is shrunk to the fewest steps that still break it.") }),
    status, result);
}

async function poll(id, status, result) {
  for (;;) {
    const r = await fetch(`/api/search/${encodeURIComponent(id)}`);
    const view = await r.json();
    if (!r.ok) { status.textContent = errorText(view.error); return; }
    const p = view.progress || {};
    if (view.state === "done") { status.textContent = ""; show(view.report, result); result.scrollIntoView({ block: "nearest" }); return; }
    if (view.state === "error") { status.textContent = t("search failed: {detail}", { detail: view.error }); return; }
    if (view.state === "cancelled") { status.textContent = t("search cancelled"); return; }
    // the job's state is an English name: a queued search waits in the page's words
    const stage = p.stage_text || p.stage || t("searching");
    status.textContent = view.state === "queued" ? t("waiting for a free worker…")
      : p.done !== undefined && p.stage !== "shrinking"
        ? t("searched {done} of {total} runs ({s} s)", { done: p.done, total: p.total, s: (p.elapsed_s || 0).toFixed(1) })
        : stage + "…";
    await new Promise(ok => setTimeout(ok, 400));
  }
}

function show(report, result) {
  clear(result);
  if (!report.found) {
    result.append(h("p.search-none", { text: t("Not found in {n} runs — \"{property}\" held in every run tried ({s} s). That is evidence, not proof.", { n: report.search.runs, property: report.property_text, s: report.search.elapsed_s }) }));
    return;
  }
  result.append(h("p.search-found", { text: report.message }),
    h("p.dim", { text: t("Shrunk from {from} to {to} operation(s) in {n} runs.", { from: report.original_operations, to: report.operations, n: report.shrink.evaluations }) }),
    h("ol.narration", null, ...report.narration.map(s => h("li", null, h("span.mono.dim", { text: `${s.t_ms} ms ` }), h("span", { text: s.text })))));
  if (report.run) {
    result.append(h("div.form", null,
      h("a.button.primary#search-open", { href: report.run.link, text: t("Watch it happen (opens paused just before)") }),
      h("input.mono", { readonly: true, value: location.origin + report.run.link, size: 50, onclick: e => e.target.select() })));
  }
}

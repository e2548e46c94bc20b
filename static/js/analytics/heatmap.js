// Heat maps of the analytics report: pure layout, then SVG rendering on a fixed colour scale
// (scale.js). Text from the data goes into the page with textContent only.
import { colour, domain, ink, legendTicks, position } from "./scale.js";
import { svgEl as el, svgText as text } from "./util.js";
import { t as tr } from "../i18n.js";


export const METRICS = {
  p_loss: { label: tr("Probability of losing an acknowledged record"), fmt: "pct", max: 1, ci: ["p_loss_lo", "p_loss_hi"] },
  offline_fraction: { label: tr("Unavailability: partition time offline"), fmt: "pct", max: 1 },
  under_min_isr_fraction: { label: tr("Partition time under min ISR"), fmt: "pct", max: 1 },
  ner_rate: { label: tr("NOT_ENOUGH_REPLICAS answers per record sent"), fmt: "pct" },
  lost_mean: { label: tr("Acknowledged records lost per run"), fmt: "num" },
  violation_share: { label: tr("Runs breaking an invariant"), fmt: "pct", max: 1,
    value: (m) => (m.runs ? m.runs_violation / m.runs : null) },
  detect_ms_p50: { label: tr("Detection: fault to ISR shrink, median"), fmt: "ms" },
  failover_ms_p50: { label: tr("Failover: fault to new leader, median"), fmt: "ms" },
  failover_ms_p95: { label: tr("Failover: fault to new leader, p95"), fmt: "ms" },
  latency_p99_ms: { label: tr("Produce latency p99"), fmt: "ms" },
  isr_churn_mean: { label: tr("ISR changes per run"), fmt: "num" },
  nonconverged_share: { label: tr("Runs that did not converge after healing"), fmt: "pct", max: 1,
    value: (m) => (m.runs ? m.nonconverged / m.runs : null) },
  // Kafka's own metrics by MBean (the runs' kafka_metrics rows; none for runs stored before them)
  km_under_min_isr_ms_mean: { label: tr("Time with UnderMinIsrPartitionCount > 0, per run"), fmt: "ms", group: "kafka" },
  km_under_replicated_ms_mean: { label: tr("Time with UnderReplicatedPartitions > 0, per run"), fmt: "ms", group: "kafka" },
  km_offline_ms_mean: { label: tr("Time with OfflinePartitionsCount > 0, per run"), fmt: "ms", group: "kafka" },
  km_offline_max: { label: tr("Peak OfflinePartitionsCount"), fmt: "num", group: "kafka" },
  km_no_controller_ms_mean: { label: tr("Time with ActiveControllerCount 0, per run"), fmt: "ms", group: "kafka" },
  km_unclean_elections_mean: { label: tr("UncleanLeaderElectionsPerSec count, per run"), fmt: "num", group: "kafka" },
  km_max_lag_peak: { label: tr("Peak ReplicaFetcherManager MaxLag (messages)"), fmt: "num", group: "kafka" },
  km_record_errors_mean: { label: tr("Producer record errors (record-error-total), per run"), fmt: "num", group: "kafka" },
  km_request_latency_peak_max: { label: tr("Peak producer request-latency-avg"), fmt: "ms", group: "kafka" },
};

export function metricValue(key, metrics) {
  if (!metrics) return null;
  const spec = METRICS[key];
  const v = spec.value ? spec.value(metrics) : metrics[key];
  return v === undefined ? null : v;
}

export function format(v, fmt) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (fmt === "pct") return v === 0 ? "0%" : v < 0.001 ? "<0.1%" : `${(100 * v).toFixed(v < 0.1 ? 1 : 0)}%`;
  if (fmt === "ms") return v >= 10000 ? `${(v / 1000).toFixed(1)} s` : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`;
  return v >= 100 ? String(Math.round(v)) : v.toFixed(v < 1 ? 2 : 1);
}

export function settingText(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

// Layout: which cell sits at which row and column, given the axes shown and the filters.
export function layout(cells, axes, xAxis, yAxis, filters) {
  const values = Object.fromEntries(axes.map(([name, vals]) => [name, vals]));
  const xs = xAxis ? values[xAxis] : [null];
  const ys = yAxis ? values[yAxis] : [null];
  const grid = ys.map(() => xs.map(() => null));
  for (const cell of cells) {
    const s = cell.settings;
    let shown = true;
    for (const [name] of axes) {
      if (name === xAxis || name === yAxis) continue;
      if (JSON.stringify(s[name]) !== JSON.stringify(filters[name])) shown = false;
    }
    if (!shown) continue;
    const xi = xAxis ? xs.findIndex((v) => JSON.stringify(v) === JSON.stringify(s[xAxis])) : 0;
    const yi = yAxis ? ys.findIndex((v) => JSON.stringify(v) === JSON.stringify(s[yAxis])) : 0;
    if (xi >= 0 && yi >= 0) grid[yi][xi] = cell;
  }
  return { xs, ys, grid };
}


// A cell whose runs drew no fault tested nothing: its 0 % is not "safe". Cells not run yet
// (no runs, no numbers) are neither.
export const UNTESTED = tr("no fault drawn — untested, not safe");
export function untested(cell) {
  return !cell.faults && (cell.runs_stored > 0 || !!cell.metrics);
}

export function faultsText(n) {
  return n === 1 ? tr("1 fault drawn") : tr("{n} faults drawn", { n });
}

function cellTitle(cell, spec, v) {
  let line = `${cell.label}: ${spec.label} ${format(v, spec.fmt)}`;
  if (untested(cell)) return line + tr(" — {untested}: its runs drew no fault, so they tested nothing", { untested: UNTESTED });
  line += ` (${faultsText(cell.faults ?? 0)})`;
  const m = cell.metrics;
  if (spec.ci && m && m[spec.ci[0]] !== null && m[spec.ci[0]] !== undefined) {
    line += tr(" — 95% Wilson interval {lo}–{hi} ({lost} of {runs} runs)",
      { lo: format(m[spec.ci[0]], "pct"), hi: format(m[spec.ci[1]], "pct"), lost: m.runs_lost, runs: m.runs });
  }
  return line;
}

export function renderHeatmap(svg, { xs, ys, grid }, metricKey, xAxis, yAxis, selected, onPick, scale = "linear") {
  svg.replaceChildren();
  const spec = METRICS[metricKey];
  const cw = Math.max(90, Math.min(150, 560 / xs.length));
  const ch = 66;
  const left = 110, top = 44;
  const width = Math.max(left + cw * xs.length + 10, left + 340);
  const blanks = grid.some((row) => row.some((cell) => cell && untested(cell)));
  const height = top + ch * ys.length + (spec.ci ? 64 : 48) + (blanks ? 16 : 0);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.dataset.scale = scale;
  if (xAxis) text(svg, left + (cw * xs.length) / 2, 12, xAxis, "axis-title");
  if (yAxis) text(svg, 8, top - 14, yAxis, "axis-title", "start");
  xs.forEach((v, i) => text(svg, left + i * cw + cw / 2, top - 12, xAxis ? settingText(v) : "", "axis"));
  ys.forEach((v, j) => text(svg, left - 8, top + j * ch + ch / 2, yAxis ? settingText(v) : "", "axis", "end"));
  grid.forEach((row, j) => row.forEach((cell, i) => {
    if (!cell) return;
    const v = metricValue(metricKey, cell.metrics);
    const t = position(v, spec, scale);
    const blank = untested(cell);
    const g = el("g", { class: `cell ${blank ? "untested" : ink(t)}` + (selected === cell.cell_id ? " selected" : ""),
      tabindex: "0", "data-cell": cell.cell_id, "data-value": v ?? "", "data-faults": cell.faults ?? 0, role: "button" }, svg);
    const title = el("title", {}, g);
    title.textContent = cellTitle(cell, spec, v);
    el("rect", { x: left + i * cw, y: top + j * ch, width: cw, height: ch, rx: 4,
      fill: blank ? `url(#${hatch(svg)})` : colour(t) }, g);
    const cx = left + i * cw + cw / 2, cy = top + j * ch + ch / 2;
    // an untested 0 is no result at all: the word, not a number a reader takes for "safe"
    text(g, cx, cy - 12, blank && !v ? tr("untested") : format(v, spec.fmt), "value");
    const m = cell.metrics;
    const sub = !m ? tr("{n} runs stored", { n: cell.runs_stored }) : metricKey === "p_loss" ? tr("{lost}/{n} runs", { lost: m.runs_lost, n: m.runs })
      : tr("{n} runs", { n: m.runs });
    text(g, cx, cy + 4, sub, "sub");
    text(g, cx, cy + 16, blank ? tr("no fault drawn") : faultsText(cell.faults ?? 0), "sub faults");
    if (spec.ci && m && m[spec.ci[0]] !== null) {
      const ci = el("g", { class: "ci" }, g);
      const x0 = left + i * cw + 8, span = cw - 16, yb = top + (j + 1) * ch - 8;
      el("line", { x1: x0 + span * m[spec.ci[0]], x2: x0 + span * m[spec.ci[1]], y1: yb, y2: yb }, ci);
    }
    g.addEventListener("click", () => onPick(cell.cell_id));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") onPick(cell.cell_id); });
  }));
  const below = top + ch * ys.length + 16;
  legend(svg, spec, scale, left, below);
  if (blanks) {
    const g = el("g", { class: "legend untested-key" }, svg);
    const y = below + (spec.ci ? 50 : 34);
    el("rect", { x: 8, y, width: 16, height: 10, fill: `url(#${hatch(svg)})` }, g);
    text(g, 30, y + 5, tr("untested: {what}", { what: UNTESTED }), "", "start");
  }
}

// the grey hatching of untested cells: far from every colour of the scale (white included)
function hatch(svg) {
  const id = `${svg.id || "map"}-untested`;
  if (!svg.querySelector(`#${id}`)) {
    const p = el("pattern", { id, width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      el("defs", {}, svg));
    el("rect", { width: 8, height: 8, fill: UNTESTED_FILL }, p);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#6b7280", "stroke-width": 3 }, p);
  }
  return id;
}
export const UNTESTED_FILL = "#3a3f4b";

// the scale under the map: a white "0" swatch, the gradient with labelled ticks, the scale's kind
function legend(svg, spec, scale, x, y) {
  const g = el("g", { class: "legend", "data-scale": scale }, svg);
  const id = `${svg.id || "map"}-ramp`;
  const grad = el("linearGradient", { id, x1: "0", x2: "1", y1: "0", y2: "0" }, el("defs", {}, g));
  for (let k = 0; k <= 10; k++) el("stop", { offset: `${k * 10}%`, "stop-color": colour(k / 10) }, grad);
  // on the log scale 0 has no place on the ramp: it gets its own white swatch in front
  const log = scale === "log";
  const w = 220, x0 = log ? x + 34 : x;
  if (log) {
    el("rect", { class: "zero", x, y, width: 16, height: 10, fill: colour(0) }, g);
    text(g, x + 8, y + 20, format(0, spec.fmt), "tick");
  }
  el("rect", { class: "ramp", x: x0, y, width: w, height: 10, fill: `url(#${id})` }, g);
  for (const { v, t } of legendTicks(spec, scale)) {
    el("line", { x1: x0 + t * w, x2: x0 + t * w, y1: y + 10, y2: y + 13 }, g);
    const over = spec.fmt === "pct" && v === domain(spec).max && metricCanExceed(spec) ? "≥" : "";
    text(g, x0 + t * w, y + 20, over + format(v, spec.fmt), "tick");
  }
  text(g, x0 + w + 14, y + 5, log ? tr("log scale") : tr("linear scale"), "kind", "start");
  if (spec.ci) text(g, 8, y + 36, tr("bar in a cell: 95% Wilson score interval; hover a cell for its numbers"), "", "start");
}

function metricCanExceed(spec) {
  return !spec.max;          // shares of runs stop at 100 %; rates such as NOT_ENOUGH_REPLICAS do not
}

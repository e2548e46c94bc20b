// Heat maps and histograms of the analytics report: pure layout, then SVG rendering.
// Text from the data goes into the page with textContent only.

const NS = "http://www.w3.org/2000/svg";

export const METRICS = {
  p_loss: { label: "Probability of losing an acknowledged record", fmt: "pct", max: 1, ci: ["p_loss_lo", "p_loss_hi"] },
  offline_fraction: { label: "Unavailability: partition time offline", fmt: "pct" },
  under_min_isr_fraction: { label: "Partition time under min ISR", fmt: "pct" },
  ner_rate: { label: "NOT_ENOUGH_REPLICAS answers per record sent", fmt: "pct" },
  lost_mean: { label: "Acknowledged records lost per run", fmt: "num" },
  violation_share: { label: "Runs breaking an invariant", fmt: "pct", max: 1,
    value: (m) => (m.runs ? m.runs_violation / m.runs : null) },
  detect_ms_p50: { label: "Detection: fault to ISR shrink, median", fmt: "ms" },
  failover_ms_p50: { label: "Failover: fault to new leader, median", fmt: "ms" },
  failover_ms_p95: { label: "Failover: fault to new leader, p95", fmt: "ms" },
  latency_p99_ms: { label: "Produce latency p99", fmt: "ms" },
  isr_churn_mean: { label: "ISR changes per run", fmt: "num" },
  nonconverged_share: { label: "Runs that did not converge after healing", fmt: "pct", max: 1,
    value: (m) => (m.runs ? m.nonconverged / m.runs : null) },
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

// colour of t in [0, 1]: dark blue -> amber -> red
const STOPS = [[23, 50, 74], [255, 181, 71], [255, 93, 108]];
export function colour(t) {
  if (t === null || t === undefined) return "#1a2230";
  const x = Math.max(0, Math.min(1, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
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

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, cls, anchor = "middle") {
  const t = el("text", { x, y, class: cls || "", "text-anchor": anchor, "dominant-baseline": "middle" }, parent);
  t.textContent = content;
  return t;
}

export function renderHeatmap(svg, { xs, ys, grid }, metricKey, xAxis, yAxis, selected, onPick) {
  svg.replaceChildren();
  const spec = METRICS[metricKey];
  const cw = Math.max(90, Math.min(150, 560 / xs.length));
  const ch = 58;
  const left = 110, top = 44;
  const width = left + cw * xs.length + 10;
  const height = top + ch * ys.length + (spec.ci ? 50 : 34);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const values = grid.flat().filter(Boolean).map((c) => metricValue(metricKey, c.metrics)).filter((v) => v !== null);
  const max = spec.max ?? Math.max(...values, 0);
  if (xAxis) text(svg, left + (cw * xs.length) / 2, 12, xAxis, "axis-title");
  if (yAxis) text(svg, 8, top - 14, yAxis, "axis-title", "start");
  xs.forEach((v, i) => text(svg, left + i * cw + cw / 2, top - 12, xAxis ? settingText(v) : "", "axis"));
  ys.forEach((v, j) => text(svg, left - 8, top + j * ch + ch / 2, yAxis ? settingText(v) : "", "axis", "end"));
  grid.forEach((row, j) => row.forEach((cell, i) => {
    if (!cell) return;
    const v = metricValue(metricKey, cell.metrics);
    const g = el("g", { class: "cell" + (selected === cell.cell_id ? " selected" : ""), tabindex: "0",
      "data-cell": cell.cell_id, role: "button" }, svg);
    const title = el("title", {}, g);
    title.textContent = `${cell.label}: ${spec.label} ${format(v, spec.fmt)}`;
    el("rect", { x: left + i * cw, y: top + j * ch, width: cw, height: ch, rx: 4,
      fill: colour(v === null ? null : max > 0 ? v / max : 0) }, g);
    text(g, left + i * cw + cw / 2, top + j * ch + ch / 2 - 8, format(v, spec.fmt), "value");
    const m = cell.metrics;
    const sub = !m ? `${cell.runs_stored} runs stored` : metricKey === "p_loss" ? `${m.runs_lost}/${m.runs} runs`
      : `${m.runs} runs`;
    text(g, left + i * cw + cw / 2, top + j * ch + ch / 2 + 10, sub, "sub");
    if (spec.ci && m && m[spec.ci[0]] !== null) {
      const ci = el("g", { class: "ci" }, g);
      const x0 = left + i * cw + 8, span = cw - 16, yb = top + (j + 1) * ch - 8;
      el("line", { x1: x0 + span * m[spec.ci[0]], x2: x0 + span * m[spec.ci[1]], y1: yb, y2: yb }, ci);
    }
    g.addEventListener("click", () => onPick(cell.cell_id));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") onPick(cell.cell_id); });
  }));
  const legend = el("g", { class: "legend" }, svg);
  const ly = top + ch * ys.length + 14;
  for (let k = 0; k <= 20; k++) {
    el("rect", { x: left + k * 8, y: ly, width: 8, height: 8, fill: colour(k / 20) }, legend);
  }
  text(legend, left - 4, ly + 4, format(0, spec.fmt), "", "end");
  text(legend, left + 172, ly + 4, format(max, spec.fmt), "", "start");
  if (spec.ci) text(legend, left, ly + 22, "bar in a cell: 95% Wilson score interval of the probability", "", "start");
}

export function renderHistogram(svg, buckets) {
  svg.replaceChildren();
  const w = 320, h = 140, pad = 22;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  if (!buckets || !buckets.length) {
    text(svg, w / 2, h / 2, "no samples");
    return;
  }
  // log-spaced bins over the bucket values, so ms and tens of seconds fit one chart
  const lo = Math.max(1, buckets[0][0]), hi = Math.max(lo + 1, buckets[buckets.length - 1][0]);
  const bins = 24;
  const counts = new Array(bins).fill(0);
  const pos = (v) => Math.min(bins - 1, Math.floor(((Math.log(Math.max(v, 1)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo) || 1)) * bins));
  let total = 0;
  for (const [b, c] of buckets) { counts[pos(b)] += c; total += c; }
  const peak = Math.max(...counts);
  const bw = (w - 2 * pad) / bins;
  counts.forEach((c, i) => {
    if (!c) return;
    const bh = ((h - 2 * pad) * c) / peak;
    const bar = el("rect", { class: "bar", x: pad + i * bw + 1, y: h - pad - bh, width: bw - 2, height: bh }, svg);
    const t = el("title", {}, bar);
    t.textContent = `${c} sample(s)`;
  });
  let acc = 0, median = buckets[0][0];
  for (const [b, c] of buckets) { acc += c; if (acc >= total / 2) { median = b; break; } }
  const mx = pad + (pos(median) + 0.5) * bw;
  el("line", { class: "p50", x1: mx, x2: mx, y1: pad - 6, y2: h - pad }, svg);
  const right = mx > w / 2;
  text(svg, right ? mx - 4 : mx + 4, pad - 10, `median ${format(median, "ms")}`, "", right ? "end" : "start");
  text(svg, pad, h - 8, format(lo, "ms"), "", "start");
  text(svg, w - pad, h - 8, format(hi, "ms"), "", "end");
  text(svg, right ? pad : w - pad, pad - 10, `${total} samples`, "", right ? "start" : "end");
}

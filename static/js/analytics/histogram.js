// The distributions of one cell (detection, failover, offline periods, latency) as histograms.
// Text from the data goes into the page with textContent only.
import { format } from "./heatmap.js";
import { svgEl as el, svgText as text } from "./util.js";
import { t as tr } from "../i18n.js";



export function renderHistogram(svg, buckets) {
  svg.replaceChildren();
  const w = 320, h = 140, pad = 22;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  if (!buckets || !buckets.length) {
    text(svg, w / 2, h / 2, tr("no samples"));
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
    t.textContent = tr("{n} sample(s)", { n: c });
  });
  let acc = 0, median = buckets[0][0];
  for (const [b, c] of buckets) { acc += c; if (acc >= total / 2) { median = b; break; } }
  const mx = pad + (pos(median) + 0.5) * bw;
  el("line", { class: "p50", x1: mx, x2: mx, y1: pad - 6, y2: h - pad }, svg);
  const right = mx > w / 2;
  text(svg, right ? mx - 4 : mx + 4, pad - 10, tr("median {v}", { v: format(median, "ms") }), "", right ? "end" : "start");
  text(svg, pad, h - 8, format(lo, "ms"), "", "start");
  text(svg, w - pad, h - 8, format(hi, "ms"), "", "end");
  text(svg, right ? pad : w - pad, pad - 10, tr("{n} samples", { n: total }), "", right ? "start" : "end");
}

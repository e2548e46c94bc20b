// The heat maps' colour scale. Fixed per kind of number (not fitted to the sweep's values), so a
// colour means the same on every sweep and every map: 0 is white, the top of the scale is dark
// red, and 6.9 % loss stays a light tint instead of the deepest red because it was the largest.

// white -> pale yellow -> orange -> red -> dark red (sequential, readable on a dark page)
const STOPS = [[255, 255, 255], [255, 236, 160], [253, 165, 85], [229, 72, 56], [150, 12, 28]];
export const EMPTY = "#2a3342";      // a cell with no number: neither white (0) nor a colour

// the domain of each format; `lo` is where the log scale starts (values above 0 but below it
// get the first tint, so "some" never looks like "none")
const DOMAINS = {
  pct: { max: 1, lo: 0.001, ticks: [0, 0.25, 0.5, 0.75, 1], logTicks: [0.001, 0.01, 0.1, 1] },
  ms: { max: 60000, lo: 10, ticks: [0, 15000, 30000, 45000, 60000], logTicks: [10, 100, 1000, 10000, 60000] },
  num: { max: 100, lo: 0.1, ticks: [0, 25, 50, 75, 100], logTicks: [0.1, 1, 10, 100] },
};

export function domain(spec) {
  const d = DOMAINS[spec.fmt] || DOMAINS.num;
  return { ...d, max: spec.scaleMax ?? d.max, ticks: spec.ticks ?? d.ticks, logTicks: spec.logTicks ?? d.logTicks };
}

// where v sits on the scale, 0..1 (null: no number)
export function position(v, spec, scale) {
  if (v === null || v === undefined || Number.isNaN(v)) return null;
  const d = domain(spec);
  if (v <= 0) return 0;
  if (scale === "log") {
    const t = (Math.log10(Math.max(v, d.lo)) - Math.log10(d.lo)) / (Math.log10(d.max) - Math.log10(d.lo));
    return Math.min(1, Math.max(0.04, t));
  }
  return Math.min(1, v / d.max);
}

export function colour(t) {
  if (t === null || t === undefined) return EMPTY;
  const x = Math.max(0, Math.min(1, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// light cells carry dark text, dark ones (and empty ones) light text (the page's text is light)
export function ink(t) {
  return t !== null && t < 0.6 ? "on-light" : "on-dark";
}

// tick positions and values of the legend
export function legendTicks(spec, scale) {
  const d = domain(spec);
  const values = scale === "log" ? d.logTicks : d.ticks;
  return values.map((v) => ({ v, t: position(v, spec, scale) ?? 0 }));
}

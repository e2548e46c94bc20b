// Per-partition time series for the chart (render/chart.js), from the frames the live page
// receives: at each frame carrying a partition, its replicas' LEO and HW and its ISR size. Bounded:
// past MAX_POINTS every other point is dropped (first and last kept), so a long run keeps a few
// hundred points spread over its whole length. The room keeps its own bounded series since the start
// of the run (app/runner/series.py): the chart asks for it once per partition and run, so a page
// that reloads still charts what happened before (withHistory). A replay asks the server for the
// whole run instead.

const MAX_POINTS = 600;

export function createSeries() { return { run: null, parts: new Map() }; }

/** A series as the chart draws it: {brokers, points: [[t, isr size, [leo...], [hw...]]]}. */
export function recordFrame(series, frame, tMs) {
  if (frame.run !== series.run) { series.run = frame.run; series.parts.clear(); }
  for (const [k, p] of Object.entries(frame.set)) {
    if (!k.startsWith("p:") || !p || !p.replica_state) continue;
    const key = k.slice(2);
    const brokers = p.replica_state.map(r => r.broker);
    let s = series.parts.get(key);
    if (!s || s.brokers.join() !== brokers.join()) { s = { brokers, points: [] }; series.parts.set(key, s); }
    const pts = s.points;
    if (pts.length && pts[pts.length - 1][0] > tMs) pts.length = 0;    // restarted: a new story
    const point = [tMs, p.isr.length, p.replica_state.map(r => r.leo), p.replica_state.map(r => r.hw)];
    if (pts.length && pts[pts.length - 1][0] === tMs) pts[pts.length - 1] = point;
    else pts.push(point);
    if (pts.length > MAX_POINTS) s.points = thin(pts);
  }
}

/** Put the room's history of partition `key` (reply of GET /api/rooms/<room>/series) before the
 *  points the frames brought since this page joined. A reply from another run is ignored. */
export function withHistory(series, key, reply) {
  if (!reply || !reply.ok || reply.run !== series.run || !reply.points.length) return false;
  let s = series.parts.get(key);
  if (s && s.brokers.join() !== reply.brokers.join()) return false;
  if (!s) { s = { brokers: reply.brokers, points: [] }; series.parts.set(key, s); }
  s.points = withEarlier(s.points, reply.points);
  return true;
}

/** `points` after the fetched `earlier` ones that come before them, thinned to MAX_POINTS (the
 *  time chart's series and the Metrics tab's samples are kept the same way). */
export function withEarlier(points, earlier) {
  const first = points.length ? points[0][0] : Infinity;
  let merged = earlier.filter(p => p[0] < first).concat(points);
  while (merged.length > MAX_POINTS) merged = thin(merged);
  return merged;
}

/** Every other point, the last one kept. */
export function thin(points) {
  const last = points[points.length - 1];
  const out = points.filter((_, i) => i % 2 === 0);
  if (out[out.length - 1] !== last) out.push(last);
  return out;
}

// Kafka's own metrics of the run (engine/metrics, app/runner/metrics.py) as the live page keeps
// them: the era's catalog (entity "mcat", once per run) and the samples the frames carry (entity
// "msample": the room's newest sample, only when there is a new one). A page that joins asks the
// room for the samples before its first frame (withMetricsHistory). Bounded like series.js: past
// MAX_POINTS every other sample is dropped, first and last kept. A replay fetches the whole run's
// samples instead (render/metrics.js).

import { thin, withEarlier } from "./series.js";

const MAX_POINTS = 600;

export function createMetricsSeries() { return { run: null, catalog: null, points: [], asked: false }; }

/** Take what a frame carries: a new run starts a new series. */
export function recordMetrics(ms, frame) {
  if (frame.run !== ms.run) { ms.run = frame.run; ms.catalog = null; ms.points = []; ms.asked = false; }
  const set = frame.set || {};
  if (set.mcat) ms.catalog = set.mcat;
  const sample = set.msample;
  if (!sample) return false;
  const pts = ms.points;
  if (pts.length && pts[pts.length - 1][0] > sample[0]) pts.length = 0;           // restarted
  if (pts.length && pts[pts.length - 1][0] === sample[0]) pts[pts.length - 1] = sample;
  else pts.push(sample);
  if (pts.length > MAX_POINTS) ms.points = thin(pts);
  return true;
}

/** Put the room's samples (GET /api/rooms/<room>/metrics) before those the frames brought. */
export function withMetricsHistory(ms, reply) {
  if (!reply || !reply.ok || reply.run !== ms.run || !reply.points.length) return false;
  if (!ms.catalog) ms.catalog = { kafka_version: reply.kafka_version, metrics: reply.metrics };
  ms.points = withEarlier(ms.points, reply.points);
  return true;
}

/** The plotted number of a value: a gauge itself, a meter's or timer's OneMinuteRate, and for a
 *  client metric {client-id: number} the number of each client. */
export function plotted(kind, value) {
  if (value === null || value === undefined) return null;
  if (kind === "meter" || kind === "timer") return value[1];
  return value;
}

/** The sample at or before t (the value shown "now"). */
export function sampleAt(points, t) {
  let best = null;
  for (const p of points) { if (p[0] <= t) best = p; else break; }
  return best;
}

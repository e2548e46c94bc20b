// One offset axis per partition, shared by all its replicas: every replica's log is drawn at its
// true log start, HW and LEO on the same axis, so a follower thousands of offsets behind (or a
// crashed broker's log on disk) shows as short, never as "aligned with the leader". By default
// the axis fits the whole log range and follows the tail; the wheel zooms, a drag pans, a
// double-click goes back to "everything, following the tail".
// State (per partition: span, lo, follow, marked offset) -> layout (axisWindow) -> render (draw*).
import { epochColor } from "../palette.js";
import { epochAt, idAt } from "../geometry.js";
import { t } from "../i18n.js";
import { reason } from "../i18n_reasons.js";

export const MIN_SPAN = 8;
const TRACK = "#10151d";
const MISMATCH = "#ff5d6c";
const GHOST = "#c77dff";
const MARK = "#ffe066";

export function newAxisState() { return { span: null, lo: 0, follow: true, mark: null }; }

/** Offsets any replica of the partition holds: [lowest log start, highest LEO]. */
export function logRange(replicas) {
  let min = Infinity, max = 0;
  for (const r of replicas) { min = Math.min(min, r.log_start_offset); max = Math.max(max, r.leo); }
  return { min: isFinite(min) ? min : 0, max };
}

/** The visible offsets [lo, hi) (hi - lo >= MIN_SPAN): the whole range plus one offset of room for
 *  the LEO marker, or `state.span` offsets at the tail (following) or from `state.lo`. */
export function axisWindow(range, state) {
  const end = range.max + 1;
  const full = Math.max(MIN_SPAN, end - range.min);
  const span = state.span === null ? full : Math.max(MIN_SPAN, Math.min(full, state.span));
  let lo = state.span === null || state.follow ? end - span : Math.max(end - full, Math.min(state.lo, end - span));
  if (lo < range.min) lo = range.min;     // a short log: room on the right, never offsets below the log's start
  return { lo, hi: lo + span, span };
}

export const xOf = (o, win, w) => (o - win.lo) * w / win.span;
export const offsetAtX = (x, win, w) => Math.floor(win.lo + x * win.span / w);

/** Zoom by `factor` (<1 = in) around offset `at`; following, the tail stays at the right edge. */
export function zoomAxis(state, range, win, factor, at) {
  const full = Math.max(MIN_SPAN, range.max + 1 - range.min);
  const span = Math.round(win.span * factor);
  if (span >= full) { state.span = null; state.follow = true; return; }
  state.span = Math.max(MIN_SPAN, span);
  if (!state.follow) state.lo = Math.round(at - (at - win.lo) * state.span / win.span);
}

/** Pan by `offsets` (negative = towards older offsets); reaching the tail follows it again. */
export function panAxis(state, range, win, offsets) {
  if (state.span === null) return;
  state.lo = Math.round(win.lo + offsets);
  state.follow = state.lo + win.span >= range.max + 1;
}

/** Centre `span` offsets on `offset` and mark it (a record found from the ledger). */
export function focusAxis(state, range, offset, id, span = 40) {
  const full = range.max + 1 - range.min;
  state.span = span >= full ? null : span;
  state.follow = state.span === null;
  state.lo = offset - Math.floor(span / 2);
  state.mark = { offset, id };
}

/** Offset runs [start, end) where `segments` and `ref` (epoch runs) both hold a record but in
 *  different leader epochs: the same offset holds a different record (the logs diverged). */
export function mismatchRuns(segments, ref) {
  const out = [];
  let j = 0;
  for (const [s, e, epoch] of segments) {
    while (j < ref.length && ref[j][1] <= s) j++;
    for (let k = j; k < ref.length && ref[k][0] < e; k++) {
      const a = Math.max(s, ref[k][0]), b = Math.min(e, ref[k][1]);
      if (a < b && ref[k][2] !== epoch) {
        if (out.length && out[out.length - 1][1] === a) out[out.length - 1][1] = b;
        else out.push([a, b]);
      }
    }
  }
  return out;
}

/** The replica others are compared with: the acting leader, else the named one, else the longest. */
export function referenceReplica(p) {
  const rs = p.replica_state;
  return rs.find(r => r.broker === p.leader && r.is_leader) || rs.find(r => r.broker === p.leader)
    || rs.reduce((a, r) => (!a || r.leo > a.leo ? r : a), null);
}

/** Truncations in the story, per partition key and broker: [{from, to, t, reason}], newest last. */
export function ghostsByKey(events) {
  const out = new Map();
  for (const e of events) {
    if (e.type !== "truncation" || !(e.from_offset > e.to_offset)) continue;
    const key = `${e.topic}-${e.partition}`;
    if (!out.has(key)) out.set(key, new Map());
    const per = out.get(key);
    if (!per.has(e.broker)) per.set(e.broker, []);
    per.get(e.broker).push({ from: e.from_offset, to: e.to_offset, t: e.t_ms, reason: e.reason || e.cause || "truncation" });
  }
  return out;
}

/** One replica's strip in a row of height `rowH` (the context is translated to the row). */
export function drawReplica(c, r, ref, ghosts, win, w, rowH, mark) {
  const alpha = r.running ? 1 : 0.5;        // a crashed broker still shows the log it holds on disk
  const x = o => xOf(o, win, w);
  const ppo = w / win.span;
  const y = 4, hgt = 14;
  c.globalAlpha = 1;
  c.fillStyle = TRACK;
  c.fillRect(0, y, w, hgt);
  c.globalAlpha = alpha;
  for (const [st, e, epoch] of r.segments) {   // epoch runs: solid below the HW, faint above
    const a = Math.max(st, win.lo), b = Math.min(e, win.hi);
    if (a >= b) continue;
    const color = epochColor(epoch);
    const split = Math.max(a, Math.min(b, r.hw));
    c.fillStyle = color;
    if (split > a) c.fillRect(x(a), y, Math.max(1, x(split) - x(a)), hgt);
    if (b > split) {
      c.globalAlpha = alpha * 0.32;
      c.fillRect(x(split), y, x(b) - x(split), hgt);
      c.globalAlpha = alpha;
      c.strokeStyle = color; c.lineWidth = 1;
      c.strokeRect(x(split) + 0.5, y + 0.5, Math.max(1, x(b) - x(split) - 1), hgt - 1);
    }
  }
  if (ppo >= 5) {                               // cell borders once offsets are wide enough to count
    const lo = Math.max(Math.ceil(win.lo), r.log_start_offset), hi = Math.min(Math.floor(win.hi), r.leo);
    c.strokeStyle = TRACK; c.lineWidth = 1; c.beginPath();
    for (let o = lo + 1; o < hi; o++) { const px = Math.round(x(o)) - 0.5; c.moveTo(px, y); c.lineTo(px, y + hgt); }
    c.stroke();
  }
  c.fillStyle = MISMATCH;                       // same offset, different record than the reference
  for (const [a, b] of divergentRuns(r, ref)) {
    const lo = Math.max(a, win.lo), hi = Math.min(b, win.hi);
    if (lo < hi) c.fillRect(x(lo), y + hgt + 1, Math.max(2, x(hi) - x(lo)), 3);
  }
  c.globalAlpha = 1;
  for (const g of ghosts || []) {               // records this replica removed by truncation
    const lo = Math.max(g.to, win.lo), hi = Math.min(g.from, win.hi);
    if (lo >= hi) continue;
    c.fillStyle = GHOST;
    for (let px = x(lo); px < x(hi); px += 4) c.fillRect(px, 0, Math.min(2, x(hi) - px), 3);
  }
  c.globalAlpha = alpha;
  if (r.flushed_offset < r.leo && r.flushed_offset >= win.lo) {
    c.fillStyle = "#8b99ad"; c.fillRect(x(r.flushed_offset) - 0.5, y + hgt, 1, 4);
  }
  marker(c, x(r.hw), w, () => {                 // HW: white bar with a notch on top
    c.fillStyle = "#ffffff";
    c.fillRect(Math.round(x(r.hw)) - 1, 1, 2, rowH - 2);
  });
  marker(c, x(r.leo), w, () => {                // LEO: dashed orange
    c.strokeStyle = "#ffb547"; c.lineWidth = 1.5; c.setLineDash([3, 2]);
    c.beginPath(); c.moveTo(x(r.leo), 1); c.lineTo(x(r.leo), rowH - 1); c.stroke(); c.setLineDash([]);
  });
  if (mark && mark.offset >= win.lo && mark.offset < win.hi) {
    c.globalAlpha = 1; c.strokeStyle = MARK; c.lineWidth = 2;
    c.strokeRect(x(mark.offset) - 1, y - 2, Math.max(3, ppo) + 2, hgt + 4);
  }
  c.globalAlpha = 1;
}

function marker(c, px, w, draw) { if (px >= -2 && px <= w + 2) draw(); }

/** Offset runs of `r` whose record differs from `ref`'s: epoch mismatches, plus different ids in
 *  the record tails both carry (same epoch, different record: rare, but a divergence too). */
export function divergentRuns(r, ref) {
  if (!ref || ref.broker === r.broker) return [];
  const runs = mismatchRuns(r.segments, ref.segments);
  const [first, ids] = r.tail || [0, []];
  for (let i = 0; i < ids.length; i++) {
    const other = idAt(ref.tail, first + i);
    if (other !== null && other !== ids[i]) runs.push([first + i, first + i + 1]);
  }
  return runs;
}

/** The axis ruler under the strips: a few round offsets, labelled. */
export function drawRuler(c, win, w, h) {
  c.clearRect(0, 0, w, h);
  c.fillStyle = "#8b99ad"; c.font = "10px ui-monospace, monospace"; c.textBaseline = "top";
  const raw = win.span / Math.max(2, Math.floor(w / 90));
  const pow = Math.pow(10, Math.floor(Math.log10(Math.max(1, raw))));
  const step = [1, 2, 5, 10].map(k => k * pow).find(s => s >= raw) || pow * 10;
  for (let o = Math.ceil(win.lo / step) * step; o < win.hi; o += step) {
    const px = xOf(o, win, w);
    c.fillRect(Math.round(px), 0, 1, 4);
    const label = String(o), tw = c.measureText(label).width;
    c.fillText(label, Math.max(0, Math.min(w - tw, px - tw / 2)), 5);
  }
}

/** Tooltip lines for offset `o` of replica `r`. */
export function describeOffset(p, r, o, ref, ghosts) {
  const lines = [`broker ${r.broker} · ${p.key} · offset ${o}`];
  if (o < r.log_start_offset) lines.push(t("below the log start offset"));
  else if (o >= r.leo) lines.push(t("not in this log (LEO {leo})", { leo: r.leo }));
  else {
    const epoch = epochAt(r.segments, o);
    lines.push(`leader epoch ${epoch}`);
    const id = idAt(r.tail, o);
    if (id) lines.push(t("record {id}", { id }));
    lines.push(o < r.hw ? t("committed (below HW {hw})", { hw: r.hw }) : t("not committed yet (HW {hw})", { hw: r.hw }));
    if (o >= r.flushed_offset) lines.push(t("not flushed to disk: a power failure loses it"));
    if (ref && ref.broker !== r.broker && divergentRuns(r, ref).some(([a, b]) => a <= o && o < b)) {
      lines.push(t("differs from broker {broker}'s record here (epoch {epoch})", { broker: ref.broker, epoch: epochAt(ref.segments, o) }));
    }
  }
  for (const g of ghosts || []) {
    // the engine's reason, in the page's language where a pattern knows it (i18n_reasons.js)
    if (g.to <= o && o < g.from) lines.push(t("truncated at {t} s: {reason}", { t: (g.t / 1000).toFixed(3), reason: reason(g.reason) }));
  }
  lines.push(t("LEO {leo} · HW {hw} · log start {start}", { leo: r.leo, hw: r.hw, start: r.log_start_offset }));
  return lines;
}

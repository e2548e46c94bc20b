// Pure geometry: where things go and how far along a message is. No DOM, no state.

export const MAP = { pad: 16, zkY: 24, brokerTop: 58, brokerH: 100, rowGap: 14, clientGap: 30, maxPerRow: 8, maxStretch: 2.2,
  voterTop: 26, voterW: 200, voterH: 46, voterNarrowH: 60, voterNarrow: 196, voterTinyH: 74, voterTiny: 140, voterGap: 16, voterBrokerGap: 40 };

/** Positions of the ZooKeeper pill (or, in KRaft eras, the controller voters: `voterIds`), the
 *  broker cards and the clients in a box of `width`. The content's own height is `natural`; given
 *  a taller box (`height`, the room the page leaves the map, at most `maxStretch` times the
 *  content) the rows spread down to fill it instead of leaving an empty band under them.
 *  `zones` (a run with racks, docs/model.md §21): [{rack, brokers, voters}] in drawing order; the
 *  brokers, and the voters named there, are drawn inside a box per zone (`zones` of the result),
 *  each broker in a slot `cardH` high (the tallest card the page has drawn: a zone's rows must not
 *  overlap, nor its first card the zone's header). */
export function clusterLayout(width, brokerIds, clientNames, height = 0, voterIds = [], zones = null, cardH = MAP.brokerH) {
  if (zones && zones.length) return zonedLayout(width, clientNames, height, voterIds, zones, Math.max(MAP.brokerH, cardH));
  const n = Math.max(1, brokerIds.length);
  const usable = Math.max(200, width - 2 * MAP.pad);
  const fit = Math.max(1, Math.min(MAP.maxPerRow, Math.floor(usable / 128) || 1));
  const rows = Math.ceil(n / fit);
  const perRow = Math.ceil(n / rows);          // balanced rows: 9 brokers -> 5 + 4
  const slot = usable / perRow;
  const bw = Math.max(104, Math.min(236, slot - 18));
  const nodes = {};
  let top = MAP.brokerTop, y0 = MAP.zkY;
  if (voterIds.length) {
    // one row of voters above the brokers, with room above it for the arcs of the Raft messages
    // between voters; on a narrow map a voter's role goes under its name, and on a tiny one (five
    // voters at 1024 px) its HW goes under its LEO: four-digit offsets do not fit on one line
    const vw = Math.min(MAP.voterW, (usable - (voterIds.length - 1) * MAP.voterGap) / voterIds.length);
    const narrow = vw < MAP.voterNarrow;
    const tiny = vw < MAP.voterTiny;
    const vh = tiny ? MAP.voterTinyH : narrow ? MAP.voterNarrowH : MAP.voterH;
    const span = voterIds.length * vw + (voterIds.length - 1) * MAP.voterGap;
    y0 = MAP.voterTop + vh / 2;
    voterIds.forEach((id, i) => {
      nodes["v:" + id] = { x: width / 2 - span / 2 + vw / 2 + i * (vw + MAP.voterGap), y: y0, w: vw, h: vh, narrow, tiny };
    });
    top = MAP.voterTop + vh + MAP.voterBrokerGap;
  } else {
    nodes.zk = { x: width / 2, y: MAP.zkY, w: 190, h: 28 };
  }
  brokerIds.forEach((id, i) => {
    const row = Math.floor(i / perRow);
    const inRow = row === rows - 1 ? n - row * perRow : perRow;
    const offset = (usable - inRow * slot) / 2;
    nodes["b:" + id] = { x: MAP.pad + offset + (i - row * perRow + 0.5) * slot,
                         y: top + MAP.brokerH / 2 + row * (MAP.brokerH + MAP.rowGap), w: bw, h: MAP.brokerH };
  });
  const clientY = top + rows * (MAP.brokerH + MAP.rowGap) + MAP.clientGap - 6;
  const m = clientNames.length;
  clientNames.forEach((name, i) => {
    nodes["c:" + name] = { x: MAP.pad + (i + 0.5) * usable / Math.max(1, m), y: clientY, w: 120, h: 22 };
  });
  const natural = clientY + (m ? 24 : 4);
  const tall = stretch(nodes, [], y0, natural, height);
  return { nodes, brokerWidth: bw, height: tall, natural, rows, zones: [] };
}

/** The map's height in a box of `height`: the content's own (`natural`) or more, up to
 *  `maxStretch` times it, with every node (and zone box) spread down from `y0` to fill it. */
function stretch(nodes, zones, y0, natural, height) {
  const tall = Math.min(Math.round(natural * MAP.maxStretch), Math.max(natural, Math.floor(height || 0)));
  if (tall > natural) {
    const k = (tall - y0) / (natural - y0);
    for (const box of Object.values(nodes)) box.y = y0 + (box.y - y0) * k;
    for (const z of zones) { const bottom = y0 + (z.y + z.h - y0) * k; z.y = y0 + (z.y - y0) * k; z.h = bottom - z.y; }
  }
  return tall;
}

// -- zones ---------------------------------------------------------------------------------------
export const ZONE = { pad: 8, head: 26, gap: 14, lineGap: 14, minSlot: 128, maxSlot: 254 };

/** Columns of broker cards per zone: every zone on one line, with as few rows inside a zone as
 *  fit (`rows` 1, 2, ...); when even one column each does not fit, as many columns as one line
 *  holds, and the zones wrap onto further lines. */
function zoneColumns(zones, usable) {
  const need = cols => cols.reduce((a, c) => a + c, 0) * ZONE.minSlot + cols.length * 2 * ZONE.pad + (cols.length - 1) * ZONE.gap;
  const most = Math.max(1, ...zones.map(z => z.brokers.length));
  for (let rows = 1; rows <= most; rows++) {
    const cols = zones.map(z => Math.max(1, Math.ceil(z.brokers.length / rows)));
    if (need(cols) <= usable) return { cols, lines: [zones.map((_z, i) => i)] };
  }
  const cap = Math.max(1, Math.floor((usable - 2 * ZONE.pad) / ZONE.minSlot));
  const cols = zones.map(z => Math.max(1, Math.min(cap, z.brokers.length)));
  const lines = [];
  let line = [];
  zones.forEach((_z, i) => {
    if (line.length && need([...line, i].map(j => cols[j])) > usable) { lines.push(line); line = []; }
    line.push(i);
  });
  lines.push(line);
  return { cols, lines };
}

/** Voters in a box `inner` wide: their width and the narrow / tiny forms (see clusterLayout). */
function voterShape(count, inner) {
  const vw = Math.min(MAP.voterW, (inner - (count - 1) * MAP.voterGap) / count);
  const narrow = vw < MAP.voterNarrow, tiny = vw < MAP.voterTiny;
  return { vw, narrow, tiny, vh: tiny ? MAP.voterTinyH : narrow ? MAP.voterNarrowH : MAP.voterH };
}

/** clusterLayout with the brokers grouped by zone: a labelled box per zone (`zones`: {rack, x, y,
 *  w, h}, x and y its top left corner), its voters in a row at its top, its brokers under them;
 *  voters in no zone keep their row above the zones. */
function zonedLayout(width, clientNames, height, voterIds, zones, cardH) {
  const usable = Math.max(200, width - 2 * MAP.pad);
  const nodes = {};
  const zoned = new Set(zones.flatMap(z => z.voters));
  const free = voterIds.filter(id => !zoned.has(id));
  let top = MAP.brokerTop, y0 = MAP.zkY;
  if (free.length) {
    const v = voterShape(free.length, usable);
    const span = free.length * v.vw + (free.length - 1) * MAP.voterGap;
    y0 = MAP.voterTop + v.vh / 2;
    free.forEach((id, i) => {
      nodes["v:" + id] = { x: width / 2 - span / 2 + v.vw / 2 + i * (v.vw + MAP.voterGap), y: y0, w: v.vw, h: v.vh, narrow: v.narrow, tiny: v.tiny };
    });
    top = MAP.voterTop + v.vh + MAP.voterBrokerGap;
  } else if (!voterIds.length) {
    nodes.zk = { x: width / 2, y: MAP.zkY, w: 190, h: 28 };
  } else {
    y0 = top = MAP.pad;                             // every voter stands in a zone
  }
  const { cols, lines } = zoneColumns(zones, usable);
  const slot = Math.min(ZONE.maxSlot, ...lines.map(line => (usable - line.length * 2 * ZONE.pad - (line.length - 1) * ZONE.gap)
    / line.reduce((a, i) => a + cols[i], 0)));
  const bw = Math.max(104, Math.min(236, slot - 18));
  const boxes = [];
  let y = top;
  for (const line of lines) {
    const shapes = line.map(i => zones[i].voters.length ? voterShape(zones[i].voters.length, cols[i] * slot) : null);
    const rows = line.map(i => Math.ceil(zones[i].brokers.length / cols[i]));
    const inner = line.map((i, k) => (shapes[k] ? shapes[k].vh + MAP.rowGap : 0)
      + Math.max(0, rows[k] * (cardH + MAP.rowGap) - MAP.rowGap));
    const h = ZONE.head + Math.max(...inner) + ZONE.pad;
    const lineW = line.reduce((a, i) => a + cols[i] * slot + 2 * ZONE.pad, 0) + (line.length - 1) * ZONE.gap;
    let x = MAP.pad + (usable - lineW) / 2;
    line.forEach((i, k) => {
      const z = zones[i], w = cols[i] * slot + 2 * ZONE.pad;
      boxes.push({ rack: z.rack, x, y, w, h });
      let rowTop = y + ZONE.head;
      const v = shapes[k];
      if (v) {
        const span = z.voters.length * v.vw + (z.voters.length - 1) * MAP.voterGap;
        z.voters.forEach((id, j) => {
          nodes["v:" + id] = { x: x + w / 2 - span / 2 + v.vw / 2 + j * (v.vw + MAP.voterGap), y: rowTop + v.vh / 2, w: v.vw, h: v.vh,
            narrow: v.narrow, tiny: v.tiny };
        });
        rowTop += v.vh + MAP.rowGap;
      }
      z.brokers.forEach((id, j) => {
        const row = Math.floor(j / cols[i]);
        const inRow = Math.min(cols[i], z.brokers.length - row * cols[i]);
        const left = x + ZONE.pad + (cols[i] - inRow) * slot / 2;
        nodes["b:" + id] = { x: left + (j - row * cols[i] + 0.5) * slot, y: rowTop + cardH / 2 + row * (cardH + MAP.rowGap),
          w: bw, h: cardH };
      });
      x += w + ZONE.gap;
    });
    y += h + ZONE.lineGap;
  }
  const clientY = y - ZONE.lineGap + MAP.clientGap + 8;
  const m = clientNames.length;
  clientNames.forEach((name, i) => {
    nodes["c:" + name] = { x: MAP.pad + (i + 0.5) * usable / Math.max(1, m), y: clientY, w: 120, h: 22 };
  });
  const natural = clientY + (m ? 24 : 4);
  const tall = stretch(nodes, boxes, y0, natural, height);
  return { nodes, brokerWidth: bw, height: tall, natural, rows: lines.length, zones: boxes };
}

/** The point where the segment from the centre of `box` towards `to` leaves the box. */
export function anchor(box, to) {
  const dx = to.x - box.x, dy = to.y - box.y;
  if (dx === 0 && dy === 0) return { x: box.x, y: box.y };
  const hw = box.w / 2 + 2, hh = box.h / 2 + 2;
  const s = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return { x: box.x + dx * s, y: box.y + dy * s };
}

/** Control point of the curve between two nodes: requests and responses bend to opposite sides,
 *  long horizontal hops arc over the nodes in between. */
export function bend(a, b, forward) {
  const dx = b.x - a.x, dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const nx = -dy / len, ny = dx / len;
  const horizontal = Math.abs(dy) < 20;
  const amount = (horizontal ? 9 + 0.07 * len : 10) * (forward ? 1 : -1);
  const sign = horizontal && ny > 0 ? -1 : 1;   // arcs go up for left-to-right hops
  return { x: (a.x + b.x) / 2 + nx * amount * sign, y: (a.y + b.y) / 2 + ny * amount * sign };
}

export function curvePoint(a, c, b, t) {
  const u = 1 - t;
  return { x: u * u * a.x + 2 * u * t * c.x + t * t * b.x, y: u * u * a.y + 2 * u * t * c.y + t * t * b.y };
}

/** Path of a message between two node boxes. */
export function messagePath(src, dst, forward) {
  const c0 = bend(src, dst, forward);
  const a = anchor(src, c0), b = anchor(dst, c0);
  return { a, c: bend(a, b, forward), b };
}

/** How long (ms of wall time) a message is drawn: its simulated flight time at the current speed,
 *  never shorter than `minMs` so that a 1 ms hop is still visible (slow motion). */
export function messageDuration(sentMs, deliverMs, speed, minMs = 450) {
  const sim = Math.max(0, deliverMs - sentMs);
  const s = speed === "max" ? 1e9 : Math.max(0.1, speed || 1);
  return Math.max(minMs, Math.min(8000, sim / s));
}

export function progress(bornAt, duration, now) {
  return Math.max(0, Math.min(1, (now - bornAt) / duration));
}

/** Offsets shown for a partition: one window shared by all replicas so equal offsets line up. */
export function logWindow(replicas, maxCells) {
  let hi = 0, lo = Infinity;
  for (const r of replicas) {
    hi = Math.max(hi, r.leo);
    lo = Math.min(lo, r.log_start_offset);
  }
  if (!isFinite(lo)) lo = 0;
  hi = hi + 1;                      // room for the LEO marker
  const cells = Math.max(8, Math.min(maxCells, hi - lo));
  lo = Math.max(lo, hi - cells);
  lo = Math.max(0, Math.min(lo, hi - cells));
  return { lo, hi: lo + cells, cells, hidden: lo };
}

export function cellX(offset, win, x0, width) { return x0 + (offset - win.lo) * width / win.cells; }

export function offsetAt(x, win, x0, width) { return win.lo + Math.floor((x - x0) * win.cells / width); }

/** Leader epoch of `offset` from runs [[start, end, epoch], ...] (binary search); null if none. */
export function epochAt(segments, offset) {
  let lo = 0, hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [s, e, epoch] = segments[mid];
    if (offset < s) hi = mid - 1;
    else if (offset >= e) lo = mid + 1;
    else return epoch;
  }
  return null;
}

/** Record id at `offset` from a tail [first offset, [ids]]; null when not in the tail. */
export function idAt(tail, offset) {
  if (!tail) return null;
  const i = offset - tail[0];
  return i >= 0 && i < tail[1].length ? tail[1][i] : null;
}

/** Share of replica.lag.time.max.ms a follower has spent not caught up (1 = out-of-sync line). */
export function lagFraction(lag) {
  if (!lag) return 0;
  if (lag.ms_behind === null || lag.ms_behind === undefined) return 1.2;
  return Math.max(0, Math.min(1.2, lag.ms_behind / lag.lag_max_ms));
}

/** ZooKeeper session left, as ms and as a share of the timeout (null without a session). */
export function sessionLeft(zk, tMs, timeoutMs) {
  if (!zk || zk.expires_at_ms === null || zk.expires_at_ms === undefined) return null;
  const left = Math.max(0, zk.expires_at_ms - tMs);
  return { ms: left, fraction: timeoutMs ? Math.min(1, left / timeoutMs) : 0 };
}

/** Simulated "now" between frames: extrapolated at the run's actual speed for at most `capMs`. */
export function simNow(clock, receivedAt, now, capMs = 120) {
  if (!clock) return 0;
  if (!clock.playing) return clock.t_ms;
  const speed = clock.actual_speed || (clock.speed === "max" ? 0 : clock.speed) || 0;
  return clock.t_ms + Math.min(capMs, now - receivedAt) * speed;
}

/** The speed slider: position 0..300 <-> 0.1x..100x on a log scale (100 steps per decade). */
export const SLIDER_MAX = 300;
export function speedFromSlider(pos) {
  const v = Math.pow(10, -1 + pos / 100);
  return v >= 10 ? Math.round(v) : v >= 1 ? Math.round(v * 10) / 10 : Math.round(v * 100) / 100;
}
export function sliderFromSpeed(speed) {
  if (speed === "max") return SLIDER_MAX;
  return Math.round((Math.log10(speed) + 1) * 100);
}

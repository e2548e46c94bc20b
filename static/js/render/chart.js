// The focused partition's time chart: LEO (dashed) and HW (solid) of every replica and the ISR
// size (the band at the bottom) over the run, faults, elections and truncations as markers — the
// picture the KIP-101 write-ups draw by hand. The live page charts the room's series since the run
// started (asked once, app.fetchRoomSeries) and what its frames carried since it joined (series.js);
// clicking selects the story's moment there; a replay charts the whole
// run (app.fetchSeries, from the server) and clicking seeks to the moment clicked.
import { h, setText } from "../dom.js";
import { seconds } from "../format.js";
import { withHistory } from "../series.js";
import { t, t as tr } from "../i18n.js";      // tr: where a time is named t (babel.cfg extracts both)

const H = 132, LEFT = 46, RIGHT = 8, TOP = 12, BAND = 16, BOTTOM = 14;
const BROKER_COLORS = ["#4fb3ff", "#3fd0a0", "#ff7aa8", "#ffb547", "#b58cff", "#a3d65c", "#4fd8e0", "#ff8c5a"];
// One mark per kind of event, each its own glyph and words in the legend. Timeline operations
// (history type "fault") are told apart by their op: a restart or a heal is no fault, and a
// produce or a config change is the scenario's action, drawn small and grey.
const MARK_KINDS = {
  crash: ["#ff5d6c", "C", t("crash / shutdown")], pause: ["#ff9f5a", "P", t("pause")],
  network: ["#ff5d6c", "N", t("network fault")], recover: ["#3fd0a0", "R", t("restart / resume / heal")],
  action: ["#8b99ad", "·", t("client or config action")],
  leader_elected: ["#ffe066", "E", t("election")], partition_offline: ["#ff5d6c", "O", t("offline (no leader)")],
  truncation: ["#c77dff", "T", t("truncation")],
};
const OP_KIND = {
  crash: "crash", shutdown: "crash", expire_session: "crash", pause: "pause",
  isolate: "network", cut: "network", partition: "network", slow: "network",
  restart: "recover", resume: "recover", heal: "recover", flush: "action",
};
const MAX_GLYPH_SHIFT = 24;               // a glyph further than this from its line is not drawn

export function brokerColor(i) { return BROKER_COLORS[i % BROKER_COLORS.length]; }

/** The mark kind of a chart mark [t, type, text, op]: a timeline operation by its op, an
 *  offline partition (ZooKeeper's partition_offline, a KRaft record naming leader -1) as one. */
export function markKind([_t, type, _text, op]) {
  if (type === "fault") return OP_KIND[op] || "action";
  if (type === "partition_change") return "partition_offline";
  return MARK_KINDS[type] ? type : null;
}

/** Size a canvas for the device pixel ratio; returns its context scaled to CSS pixels. */
export function fitCanvas(canvas, w, hgt) {
  const dpr = window.devicePixelRatio || 1;
  const resized = canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr);
  if (resized) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(hgt * dpr); canvas.style.height = hgt + "px"; }
  const c = canvas.getContext("2d");
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { c, resized };
}

/** Markers of partition `key` from story events ({t_ms, type, ...}): [t, type, text]. */
export function marksFromEvents(events, key) {
  const out = [];
  for (const e of events) {
    const offline = e.type === "partition_change" && e.leader === -1;
    if (!MARK_KINDS[e.type] && e.type !== "fault" && !offline) continue;
    if (e.type !== "fault" && `${e.topic}-${e.partition}` !== key) continue;
    out.push([e.t_ms, e.type, e.reason || e.type, e.op]);
  }
  return out.slice(-200);
}

/** Where replica i's lines are drawn: replicas with equal values would hide each other, so each
 *  line is offset by a pixel or two around the true value (the tooltip gives exact numbers). */
function lineOffset(i, n) { return (i - (n - 1) / 2) * 2; }

export function createChart(app) {
  const el = h("div.pchart", null, h("canvas.pchart-canvas"), h("div.pchart-legend.small"));
  const canvas = el.firstChild, legend = el.lastChild;
  const tooltip = document.getElementById("tooltip");
  const fetched = new Map();              // replay: key -> series (or "loading")
  const asked = new Set();                // live: "run|key" whose room history was asked for
  let layout = null;                      // what was drawn last: for clicks and hover

  function seriesOf(key, store) {
    if (!app.fetchSeries) {
      historyOf(key, store);
      const s = store.series && store.series.parts.get(key);
      return s ? { ...s, marks: marksFromEvents(store.events, key), end_ms: null } : null;
    }
    const got = fetched.get(key);
    if (got === undefined) {
      fetched.set(key, "loading");
      app.fetchSeries(key).then(reply => { fetched.set(key, reply && reply.ok ? reply : null); app.requestRender(true); },
        () => fetched.set(key, null));
    }
    return got && got !== "loading" ? got : null;
  }

  /** Live: the room's series since the start of the run, asked once per partition and run (a
   *  reloaded page charts what happened before it joined; the frames add the rest). */
  function historyOf(key, store) {
    if (!app.fetchRoomSeries || !store.series || store.series.run === null) return;
    // only a partition this run's frames have carried: a card drawn from the previous run's
    // state while the room already runs a new scenario would ask for a partition it lacks
    if (!store.series.parts.has(key)) return;
    const ask = `${store.series.run}|${key}`;
    if (asked.has(ask)) return;
    asked.add(ask);
    app.fetchRoomSeries(key).then(reply => { if (withHistory(store.series, key, reply)) app.requestRender(true); },
      () => asked.delete(ask));
  }

  function timeAt(x) {
    if (!layout) return null;
    return Math.round(Math.max(0, Math.min(layout.t1, layout.t0 + (x - LEFT) * (layout.t1 - layout.t0) / layout.pw)));
  }

  canvas.addEventListener("click", e => {
    const t = timeAt(e.offsetX);
    if (t === null) return;
    if (app.seek) { app.seek(t); return; }                 // a replay: go to that moment
    const store = app.store;                               // live: the story's moment at or before t
    let pick = null;
    for (const ev of store.events) if (ev.t_ms <= t && typeof ev.i === "number") pick = ev;
    if (pick) app.selectEvent(pick, true);
  });
  canvas.addEventListener("mousemove", e => {
    const t = timeAt(e.offsetX);
    if (t === null || !layout) return;
    const pts = layout.points;
    let best = pts[0];
    for (const p of pts) if (p[0] <= t) best = p;
    const hint = app.seek ? tr("click to go there") : tr("click to select the story here");
    const lines = [seconds(t) + " · " + hint];
    if (best) layout.brokers.forEach((b, i) => lines.push(`b${b}: LEO ${best[2][i]} · HW ${best[3][i]}`));
    if (best) lines.push(tr("ISR size {n}", { n: best[1] }));
    tooltip.textContent = lines.join("\n");
    tooltip.hidden = false;
    tooltip.style.left = Math.min(window.innerWidth - 300, e.clientX + 14) + "px";
    tooltip.style.top = (e.clientY + 14) + "px";
  });
  canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });

  /** Show the chart of partition `p` in `card` (moving it from the card it was in). */
  function render(card, p, store, width, force) {
    if (el.parentNode !== card) card.appendChild(el);
    const s = seriesOf(p.key, store);
    const now = store.clock ? store.clock.t_ms : 0;
    const pts = s ? s.points : [];
    const key = [p.key, width, pts.length, pts.length ? JSON.stringify(pts[pts.length - 1]) : "", s ? s.marks.length : 0, now].join("|");
    if (!force && el.__drawn === key) return;
    el.__drawn = key;
    const { c } = fitCanvas(canvas, width, H);
    if (canvas.style.width !== width + "px") canvas.style.width = width + "px";
    c.clearRect(0, 0, width, H);
    el.dataset.key = p.key;
    if (!s || !pts.length) {
      layout = null;
      c.fillStyle = "#8b99ad"; c.font = "11px ui-sans-serif, sans-serif";
      c.fillText(s === null && app.fetchSeries ? tr("loading the run's series…") : tr("no samples yet"), LEFT, H / 2);
      setText(legend, "");
      legend.__key = "";                  // drawn again when samples come
      return;
    }
    const t0 = 0, t1 = Math.max(1, s.end_ms || 0, pts[pts.length - 1][0], app.fetchSeries ? 0 : now);
    let y1 = 1;
    for (const q of pts) for (const v of q[2]) y1 = Math.max(y1, v);
    const pw = width - LEFT - RIGHT, ph = H - TOP - BAND - BOTTOM;
    const X = t => LEFT + (t - t0) * pw / (t1 - t0), Y = o => TOP + ph - o * ph / y1;
    layout = { t0, t1, pw, points: pts, brokers: s.brokers };
    // axes and labels
    c.strokeStyle = "#2a3445"; c.lineWidth = 1;
    c.strokeRect(LEFT + 0.5, TOP + 0.5, pw, ph);
    c.fillStyle = "#8b99ad"; c.font = "10px ui-monospace, monospace"; c.textBaseline = "middle";
    c.fillText(String(y1), 2, TOP + 4); c.fillText("0", 2, TOP + ph);
    c.fillText("ISR", 2, TOP + ph + BAND / 2 + 1);
    c.textBaseline = "top";
    c.fillText(seconds(t0), LEFT, H - BOTTOM + 2);
    const endLabel = seconds(t1);
    c.fillText(endLabel, LEFT + pw - c.measureText(endLabel).width, H - BOTTOM + 2);
    // ISR size: a step band under the plot
    const rf = Math.max(1, s.brokers.length), bandTop = TOP + ph + 2, bandH = BAND - 4;
    c.fillStyle = "rgba(63, 208, 160, .35)";
    pts.forEach((q, i) => {
      const next = i + 1 < pts.length ? pts[i + 1][0] : (app.fetchSeries ? q[0] : Math.max(q[0], now));
      const hgt = bandH * q[1] / rf;
      c.fillRect(X(q[0]), bandTop + bandH - hgt, Math.max(1, X(next) - X(q[0])), hgt);
    });
    const shown = drawMarks(c, s.marks, X, ph);
    // HW (solid) and LEO (dashed) per replica. The series is sampled every so often, not at each
    // change: a straight line between two samples is what is known (a step would hold a value
    // that in fact kept moving, then jump).
    s.brokers.forEach((b, i) => {
      const dy = lineOffset(i, s.brokers.length);
      for (const [field, dash, lw] of [[2, [4, 3], 1.2], [3, [], 1.8]]) {
        c.strokeStyle = brokerColor(i); c.lineWidth = lw; c.setLineDash(dash);
        c.beginPath();
        pts.forEach((q, j) => { const x = X(q[0]), y = Y(q[field][i]) + dy; if (j === 0) c.moveTo(x, y); else c.lineTo(x, y); });
        c.stroke();
      }
    });
    c.setLineDash([]);
    if (app.fetchSeries || now > pts[pts.length - 1][0]) {    // where the picture is now
      c.strokeStyle = "rgba(255,255,255,.7)"; c.lineWidth = 1;
      c.beginPath(); c.moveTo(Math.round(X(Math.min(now, t1))) + 0.5, TOP); c.lineTo(Math.round(X(Math.min(now, t1))) + 0.5, TOP + ph + BAND); c.stroke();
    }
    const last = pts[pts.length - 1];
    el.dataset.last = JSON.stringify({ t: last[0], isr: last[1], leo: Object.fromEntries(s.brokers.map((b, i) => [b, last[2][i]])),
      hw: Object.fromEntries(s.brokers.map((b, i) => [b, last[3][i]])) });
    el.dataset.layout = JSON.stringify({ left: LEFT, width: pw, t0, t1 });
    const legendKey = s.brokers.join() + "|" + [...shown].join();
    if (legend.__key !== legendKey) {
      legend.__key = legendKey;
      const kinds = Object.keys(MARK_KINDS).filter(k => shown.has(k));
      legend.replaceChildren(...s.brokers.map((b, i) => h("span", { style: { color: brokerColor(i) }, text: `b${b} ━ HW ┅ LEO` })),
        h("span.dim", { text: t("band: ISR size · equal lines drawn 2 px apart") }),
        ...kinds.map(k => h("span.mark-key", { style: { color: MARK_KINDS[k][0] }, dataset: { kind: k },
          text: `${MARK_KINDS[k][1]} ${MARK_KINDS[k][2]}` })));
    }
  }

  /** The event marks: a dotted line at each, its glyph above; glyphs of marks close in time sit
   *  side by side, and one that would land far from its line is left out (the line stays).
   *  Returns the kinds drawn, for the legend. */
  function drawMarks(c, marks, X, ph) {
    const shown = new Set();
    let glyphX = -Infinity;
    for (const mark of marks) {
      const kind = markKind(mark);
      if (!kind) continue;
      const [color, glyph] = MARK_KINDS[kind];
      const x = Math.round(X(mark[0])) + 0.5;
      shown.add(kind);
      c.strokeStyle = color; c.globalAlpha = kind === "action" ? 0.3 : 0.55; c.setLineDash([2, 3]);
      c.beginPath(); c.moveTo(x, TOP); c.lineTo(x, TOP + ph); c.stroke(); c.setLineDash([]);
      c.globalAlpha = 1;
      const gx = Math.max(x - 3, glyphX + 8);
      if (gx - x > MAX_GLYPH_SHIFT) continue;
      glyphX = gx;
      c.fillStyle = color; c.fillText(glyph, gx, 0);
    }
    return shown;
  }

  function detach() { if (el.parentNode) el.remove(); layout = null; el.__drawn = ""; }

  return { render, detach, el };
}

// The Metrics tab: Kafka's own metrics over the run as small multiples, one per MBean an SRE
// would watch (engine/metrics/catalog.py: only those the era's Kafka has), each labelled with its
// MBean name, its value now in the era's unit, and its graph from the start of the run, with the
// moment shown marked. Each sample holds until the next (steps); a meter or a timer by its OneMinuteRate (Yammer's
// 5-second EWMA ticks), its Count beside; a producer metric one line per client-id. Everything is
// derived from the simulation's state on the server (docs/model.md §22). The live page graphs the
// samples its frames carry (metrics.js) after the room's history; a replay graphs the whole run
// (app.fetchMetrics) and a click on a graph seeks there.
import { t, t as tr, known } from "../i18n.js";      // tr: where a time is named t (babel.cfg extracts both)
import { h, setText } from "../dom.js";
import { seconds } from "../format.js";
import { plotted, sampleAt, withMetricsHistory } from "../metrics.js";
import { brokerColor, fitCanvas } from "./chart.js";

const H = 46, LEFT = 38, RIGHT = 6, TOP = 4, BOTTOM = 4;
const LINE = "#4fb3ff", CURSOR = "rgba(255,255,255,.7)";
const YAMMER_ATTRIBUTES = ["Value", "Count, OneMinuteRate", "Count, OneMinuteRate, Mean, Max"];
const aggText = agg => ({ sum: t("sum over the processes that answer"), max: t("largest over the brokers that answer"),
  image: t("the committed metadata image (every controller)"), client: t("per client-id") })[agg] || agg;

export function createMetrics(app) {
  const panel = document.getElementById("panel-metrics");
  const head = h("div.metrics-head.small.dim");
  const grid = h("div.metrics-grid");
  panel.append(head, grid);
  const tooltip = document.getElementById("tooltip");
  const cards = new Map();            // metric index -> {el, canvas, value, sub, layout}
  let shape = "";                     // which catalog the cards were built for
  let replay = null;                  // replay: the fetched whole-run reply, "loading" or "failed"

  function source(store) {
    if (app.fetchMetrics) {
      if (replay === null) {
        replay = "loading";
        app.fetchMetrics().then(reply => { replay = reply && reply.ok ? reply : "failed"; app.requestRender(true); },
          () => { replay = "failed"; app.requestRender(true); });
      }
      if (!replay || typeof replay === "string") return null;
      return { catalog: replay, points: replay.points, end: replay.end_ms };
    }
    const ms = store.metricSeries;
    if (!ms || !ms.catalog) return null;
    if (!ms.asked && app.fetchRoomMetrics && ms.run !== null) {
      ms.asked = true;
      app.fetchRoomMetrics().then(reply => { if (withMetricsHistory(ms, reply)) app.requestRender(true); },
        () => { ms.asked = false; });
    }
    return { catalog: ms.catalog, points: ms.points, end: null };
  }

  function build(catalog) {
    grid.replaceChildren();
    cards.clear();
    catalog.metrics.forEach((m, i) => {
      const canvas = h("canvas.mchart", { "aria-label": t("{mbean} over the run", { mbean: m.mbean }) });
      const value = h("span.mvalue.mono"), sub = h("span.msub.small.dim");
      // a Yammer metric is named by its MBean; a Kafka-metrics one by its MBean and attribute
      const name = YAMMER_ATTRIBUTES.includes(m.attribute) ? m.mbean : `${m.mbean} ${m.attribute}`;
      const el = h("div.mcard", { dataset: { id: m.id, kind: m.kind } },
        // the engine's words (engine/metrics/catalog.py), in the page's language (app/i18n/metrics_extract.py)
        h("div.mname.mono", { title: `${known(m.what)} (${m.attribute}; ${aggText(m.agg)})` }, breakable(name)),
        h("div.mline", null, value, h("span.munit.dim", { text: known(m.unit) }), sub),
        canvas);
      const card = { el, canvas, value, sub, m, layout: null, drawn: "" };
      canvas.addEventListener("mousemove", e => hover(card, e));
      canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
      canvas.addEventListener("click", e => {
        const t = timeAt(card, e.offsetX);
        if (t !== null && app.seek) app.seek(t);
      });
      cards.set(i, card);
      grid.appendChild(el);
    });
  }

  function timeAt(card, x) {
    const l = card.layout;
    if (!l) return null;
    return Math.round(Math.max(0, Math.min(l.t1, (x - LEFT) * l.t1 / l.pw)));
  }

  function hover(card, e) {
    const t = timeAt(card, e.offsetX);
    if (t === null) return;
    const p = sampleAt(card.layout.points, t);
    const go = app.seek ? " · " + tr("click to go there") : "";
    const lines = [seconds(t) + go, card.m.mbean.replace(/,/g, ",\n  ")];
    if (p) lines.push(describe(card.m, p[card.layout.index + 1]));
    tooltip.textContent = lines.join("\n");
    tooltip.hidden = false;
    // the side panel is at the right edge: the tip goes left of the pointer when it would not fit
    const w = tooltip.offsetWidth;
    tooltip.style.left = Math.max(4, e.clientX + 14 + w > window.innerWidth - 4 ? e.clientX - 14 - w : e.clientX + 14) + "px";
    tooltip.style.top = (e.clientY + 14) + "px";
  }

  function render(store) {
    const src = source(store);
    if (!src) {
      setText(head, app.fetchMetrics ? (replay === "failed" ? t("The run's metrics could not be computed.")
        : t("Sampling the run's metrics…")) : t("No metrics yet."));
      return;
    }
    const key = src.catalog.kafka_version + "|" + src.catalog.metrics.map(m => m.id).join();
    if (key !== shape) { shape = key; build(src.catalog); }
    const now = store.clock ? store.clock.t_ms : 0;
    const pts = src.points;
    const t1 = Math.max(1, src.end || 0, pts.length ? pts[pts.length - 1][0] : 0, src.end ? 0 : now);
    const moment = app.fetchMetrics ? t("the replay's moment") : t("now");
    setText(head, t("Kafka {version}: {n} metrics by MBean name, 0 – {end}; the white line is {moment} ({now}).", {
      version: src.catalog.kafka_version, n: src.catalog.metrics.length, end: seconds(t1), moment, now: seconds(now) }));
    const shown = sampleAt(pts, now) || pts[pts.length - 1];
    const width = Math.max(120, grid.clientWidth - 2);
    for (const [i, card] of cards) {
      const v = shown ? shown[i + 1] : null;
      setText(card.value, valueText(card.m, v));
      setText(card.sub, subText(card.m, v));
      draw(card, i, pts, t1, now, width);
    }
  }

  function draw(card, index, pts, t1, now, width) {
    const last = pts.length ? JSON.stringify(pts[pts.length - 1][index + 1]) : "";
    const key = [width, pts.length, pts.length ? pts[pts.length - 1][0] : 0, last, t1, now].join("|");
    if (card.drawn === key) return;
    card.drawn = key;
    const { c } = fitCanvas(card.canvas, width, H);
    if (card.canvas.style.width !== width + "px") card.canvas.style.width = width + "px";
    c.clearRect(0, 0, width, H);
    const pw = width - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    card.layout = { t1, pw, points: pts, index };
    const m = card.m;
    const lines = seriesOf(m, pts, index);
    let y1 = 0;
    for (const line of lines) for (const [, v] of line.values) if (v !== null && v > y1) y1 = v;
    y1 = niceMax(y1, m.kind);
    const X = t => LEFT + t * pw / t1, Y = v => TOP + ph - v * ph / y1;
    c.strokeStyle = "#2a3445"; c.lineWidth = 1;
    c.strokeRect(LEFT + 0.5, TOP + 0.5, pw, ph);
    c.fillStyle = "#8b99ad"; c.font = "10px ui-monospace, monospace"; c.textBaseline = "top";
    c.fillText(short(y1), 2, TOP);
    c.textBaseline = "bottom";
    c.fillText("0", 2, TOP + ph);
    for (const line of lines) {
      c.strokeStyle = line.color; c.lineWidth = 1.5;
      c.beginPath();
      // steps: a gauge, a rate read at its tick, holds its value until the next sample says otherwise
      let open = false, prevY = 0;
      for (const [t, v] of line.values) {
        if (v === null) { open = false; continue; }
        const y = Y(v);
        if (!open) { c.moveTo(X(t), y); open = true; } else { c.lineTo(X(t), prevY); c.lineTo(X(t), y); }
        prevY = y;
      }
      c.stroke();
    }
    const x = Math.round(X(Math.min(now, t1))) + 0.5;
    c.strokeStyle = CURSOR; c.lineWidth = 1;
    c.beginPath(); c.moveTo(x, TOP); c.lineTo(x, TOP + ph); c.stroke();
    card.el.dataset.max = String(y1);
  }

  return { render, root: panel };
}

/** An MBean name with a place to break after each comma and colon (a <wbr>: the text stays the
 *  name, word for word). */
function breakable(name) {
  const out = [];
  for (const part of name.split(/(?<=[,:])/)) out.push(part, h("wbr"));
  return out;
}

/** The lines of one metric: [{color, values: [[t, number|null]]}]; a client metric one per client. */
function seriesOf(m, pts, index) {
  if (m.kind !== "client") {
    return [{ color: LINE, values: pts.map(p => [p[0], plotted(m.kind, p[index + 1])]) }];
  }
  const names = [];
  for (const p of pts) for (const k of Object.keys(p[index + 1] || {})) if (!names.includes(k)) names.push(k);
  return names.map((name, i) => ({ color: brokerColor(i), values: pts.map(p => [p[0], p[index + 1] ? (p[index + 1][name] ?? null) : null]) }));
}

function niceMax(v, kind) {
  if (v <= 0) return kind === "gauge" ? 1 : 0.1;
  if (kind === "gauge" && v < 5) return Math.ceil(v);
  const exp = Math.pow(10, Math.floor(Math.log10(v)));
  for (const f of [1, 2, 2.5, 5, 10]) if (v <= f * exp) return f * exp;
  return 10 * exp;
}

function short(v) {
  if (v >= 10000) return `${Math.round(v / 1000)}k`;
  if (v >= 100) return String(Math.round(v));
  return String(Number(v.toPrecision(2)));
}

function num(v, digits = 3) {
  if (v === null || v === undefined) return "–";
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toFixed(digits)));
}

/** The value now, in the metric's unit. */
export function valueText(m, v) {
  if (v === null || v === undefined) return "–";
  if (m.kind === "meter" || m.kind === "timer") return num(v[1], 4);
  if (m.kind === "client") {
    const names = Object.keys(v);
    return names.length ? names.map(n => `${n} ${num(v[n], 2)}`).join(" · ") : t("no producer");
  }
  return num(v);
}

function subText(m, v) {
  if (v === null || v === undefined) return m.kind === "client" ? "" : t("no process answers");
  if (m.kind === "meter") return `OneMinuteRate · Count ${v[0]}`;
  if (m.kind === "timer") return `OneMinuteRate · Count ${v[0]} · Mean ${num(v[2], 1)} ms · Max ${num(v[3])} ms`;
  return "";
}

function describe(m, v) {
  if (m.kind === "meter" || m.kind === "timer") return `${valueText(m, v)} ${known(m.unit)} · ${subText(m, v)}`;
  return `${valueText(m, v)} ${known(m.unit)}`;
}

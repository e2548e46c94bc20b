// Compare two runs (or one run under another era / acks / config) on one time axis: the server
// finds the first moment they diverge; two replays side by side follow one scrubber.
import { h, setText } from "../dom.js";
import { seconds, errorText } from "../format.js";
import { getJSON, postJSON } from "../http.js";
import { toast } from "../ui/toast.js";
import { storyMarks, placeMark } from "./marks.js";
import { eraOption } from "../kafka.js";
import { t as tr } from "../i18n.js";
import { storyName } from "../i18n_story.js";

const $ = id => document.getElementById(id);
const C = { a: null, b: null, end: 0, divergence: null, t: 0 };
const LANE_MARKS = ["leader_elected", "isr_shrink", "isr_expand", "truncation", "fault", "alter_partition", "isr_change_notification"];

function sides() {
  const a = $("run-a").value.trim(), b = $("run-b").value.trim();
  if (!a) throw new Error(tr("run A: give a saved run's id or a library scenario's name"));
  const left = /^[1-9][0-9]*$/.test(a) ? { run: Number(a) } : { library: a };
  if (b) {
    return [left, /^[1-9][0-9]*$/.test(b) ? { run: Number(b) } : { library: b }];
  }
  const variant = {};
  if ($("variant-era").value) variant.kafka_version = $("variant-era").value;
  if ($("variant-acks").value) variant.acks = $("variant-acks").value;
  const cfg = $("variant-config").value.trim();
  if (cfg) {
    const m = cfg.match(/^([a-z0-9._-]+)\s*=\s*(.+)$/i);
    if (!m) throw new Error(tr("config: write key=value, e.g. min.insync.replicas=2"));
    let value = m[2].trim();
    if (/^-?[0-9]+$/.test(value)) value = Number(value);
    else if (value === "true" || value === "false") value = value === "true";
    variant.config = { [m[1]]: value };
  }
  if (!Object.keys(variant).length) throw new Error(tr("run B: give a second run, or a variant of A (era, acks or config)"));
  return [left, { variant }];
}

async function run() {
  let body;
  try { body = sides(); } catch (e) { toast(tr("Cannot compare"), e.message, "error"); return; }
  setText($("compare-status"), tr("comparing (re-simulating both runs)…"));
  const reply = await postJSON("/api/compare", { a: body[0], b: body[1] });
  if (!reply.ok) { setText($("compare-status"), ""); toast(tr("Cannot compare"), errorText(reply.error), "error", 9000); return; }
  setText($("compare-status"), tr("compared in {ms} ms", { ms: reply.wall_ms }));
  const q = new URLSearchParams({ a: $("run-a").value.trim() });
  if ($("run-b").value.trim()) q.set("b", $("run-b").value.trim());
  for (const [k, id] of [["era", "variant-era"], ["acks", "variant-acks"], ["config", "variant-config"]]) if ($(id).value) q.set(k, $(id).value);
  history.replaceState(null, "", "/compare?" + q);
  show(reply);
}

function describe(side) {
  // a run's title is its user's words, or a library story's (and its rerun marker): in the page's language
  return tr("{title} · kafka_version {v} · acks {acks} · seed {seed}", { title: storyName(side.title), v: side.kafka_version, acks: side.acks.join("/") || "–", seed: side.seed });
}

// docs/model.md §4.2 vs §17 vs §20.5: who writes an ISR change, when the two sides' eras differ on it
function isrPath(reply) {
  const notes = C.notes || {};
  const how = v => (notes[v] || {}).kraft
    ? tr("{v}: the leader sends {api} to the active controller, which appends a PartitionChangeRecord to the metadata log; brokers apply it as they fetch the log; no ZooKeeper", { v, api: notes[v].api })
    : (notes[v] || {}).isr_path === "controller"
    ? tr("{v}: the leader sends {api} to the controller, which writes the znode and sends UpdateMetadata at once; no /isr_change_notification", { v, api: notes[v].api })
    : tr("{v}: the leader writes the znode itself; the controller learns of it through /isr_change_notification 5–7.5 s later", { v });
  const path = v => ((notes[v] || {}).kraft ? "kraft" : (notes[v] || {}).isr_path);
  const a = path(reply.a.kafka_version), b = path(reply.b.kafka_version);
  if (!a || !b || a === b) return null;
  return h("div#isr-path", null, h("b", { text: tr("ISR changes: ") }), tr("A {a} — B {b}", { a: how(reply.a.kafka_version), b: how(reply.b.kafka_version) }));
}

// The headline is the first difference a reader cares about (an election, an ISR change, a lost
// or failed record), in the server's words; the first difference of any kind — often the same
// election a few milliseconds apart — follows as a timing detail.
function headline(reply) {
  const s = reply.semantic, d = reply.divergence;
  const end = seconds(reply.end_ms);
  if (!s && !d) return h("div#divergence", { text: tr("No divergence up to {t}: the two runs agree on every leader, ISR, log and record fate.", { t: end }) });
  if (!s) return h("div#divergence", { text: tr("No election, ISR change or record fate differs up to {t}: the runs differ only in timing.", { t: end }) });
  return h("div#divergence", { "data-kind": s.kind }, h("b", { text: tr("First difference that matters: ") }), s.text);
}

function timingDetail(reply) {
  const d = reply.divergence;
  if (!d) return null;
  return h("div.small.dim#timing-detail", null, tr("Timing detail — the first difference of any kind: "), d.text,
    tr(" (the same change at another moment, or a record at another offset, is not a difference of outcome)."));
}

function recordLines(records) {
  const total = records.lost_total;
  const counts = tr("lost in A only: {a} · lost in B only: {b} · acknowledged in one, failed in the other: {both}",
    { a: records.lost_a, b: records.lost_b, both: records.acked_failed });
  const lines = [
    h("div#records-lost", null, h("b", { text: tr("Acknowledged records lost ") }), tr("(as a saved run counts them): "),
      tr("run A {a}, run B {b}", { a: total.a, b: total.b })),
    h("div#record-counts", null, h("b", { text: tr("Records that end differently: ") }), counts)];
  if (records.timing_only) {
    lines.push(h("div.small.dim", { text: tr("{n} other record(s) end the same way in both runs, at another offset or not yet settled (timing only).", { n: records.timing_only }) }));
  }
  if (records.count) {
    lines.push(h("ul.compare-fates", null, ...records.records.slice(0, 8).map(r => h("li", { text: r.text }))));
  }
  return lines;
}

function show(reply) {
  // the scrubber and the lanes go to the difference that matters, else to the first of any kind
  const mark = reply.semantic || reply.divergence;
  C.a = reply.a; C.b = reply.b; C.end = reply.end_ms; C.divergence = mark;
  const box = $("compare-result");
  const lines = [h("div", null, h("b", { text: "A: " }), describe(reply.a)), h("div", null, h("b", { text: "B: " }), describe(reply.b)),
    headline(reply)];
  const detail = timingDetail(reply);
  if (detail) lines.push(detail);
  const path = isrPath(reply);
  if (path) lines.push(path);
  lines.push(...recordLines(reply.records));
  box.replaceChildren(...lines);
  $("compare-scrub").max = String(C.end);
  $("to-divergence").disabled = !mark;
  $("pane-a").src = `/replay/${encodeURIComponent(reply.a.rid)}?embed=1`;
  $("pane-b").src = `/replay/${encodeURIComponent(reply.b.rid)}?embed=1`;
  lanes();
  setTime(mark ? Math.max(0, mark.t_ms) : 0);
}

// each run's marks on its own lane, on the common axis, with the first divergence on both
async function lanes() {
  for (const [side, lane] of [[C.a, "lane-a"], [C.b, "lane-b"]]) {
    const reply = await getJSON(`/api/replay/${encodeURIComponent(side.rid)}/timeline`);
    if (!reply.ok) continue;
    const marks = storyMarks(reply.story, reply.violations, C.end, { types: LANE_MARKS, limit: 300 });
    if (C.divergence) marks.push(placeMark(h("span.mark.divergence", { title: tr("first difference at {t}", { t: seconds(C.divergence.t_ms) }) }), C.divergence.t_ms, C.end));
    $(lane).replaceChildren(...marks);
  }
}

function setTime(t) {
  C.t = t;
  $("compare-scrub").value = String(t);
  setText($("compare-time"), `${seconds(t)} / ${seconds(C.end)}`);
  const msg = { isrlab: "compare", t };
  if (C.divergence && C.divergence.partition && t === C.divergence.t_ms) msg.highlight = C.divergence.partition;
  for (const id of ["pane-a", "pane-b"]) {
    const w = $(id).contentWindow;
    if (w) w.postMessage(msg, location.origin);
  }
}

window.addEventListener("message", e => {
  if (e.origin !== location.origin || !e.data || e.data.isrlab !== "replay") return;
  C.seen = C.seen || {};
  C.seen[String(e.data.run)] = e.data.t;
});
for (const id of ["pane-a", "pane-b"]) $(id).addEventListener("load", () => setTimeout(() => setTime(C.t), 300));
$("compare-scrub").addEventListener("input", e => setTime(Number(e.target.value)));
$("to-divergence").addEventListener("click", () => C.divergence && setTime(C.divergence.t_ms));
$("compare-form").addEventListener("submit", e => { e.preventDefault(); run(); });
window.isrlabCompare = C;

getJSON("/api/eras").then(reply => {
  if (!reply.versions) return;
  C.notes = reply.notes || {};
  $("variant-era").append(...reply.versions.map(v => eraOption(v, (reply.notes || {})[v])));
  const q = new URLSearchParams(location.search);
  if (q.get("era")) $("variant-era").value = q.get("era");
  if (q.get("acks")) $("variant-acks").value = q.get("acks");
  if (q.get("config")) $("variant-config").value = q.get("config");
  if (q.get("a")) $("run-a").value = q.get("a");
  if (q.get("b")) $("run-b").value = q.get("b");
  if (q.get("a") && (q.get("b") || q.get("era") || q.get("acks") || q.get("config"))) run();
});

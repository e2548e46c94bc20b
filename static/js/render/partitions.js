// Partitions: a card per partition with, for each replica, its log as a strip on the partition's
// one offset axis (render/logaxis.js), ISR membership, the leader's crown and the lag bar against
// replica.lag.time.max.ms; the focused partition's card also carries its time chart (chart.js).
import { h, reconcile, setText, setClass, setStyle } from "../dom.js";
import { shortSeconds, list } from "../format.js";
import { lagFraction } from "../geometry.js";
import { sortedPartitions } from "../store.js";
import { newAxisState, logRange, axisWindow, offsetAtX, zoomAxis, panAxis, focusAxis, referenceReplica,
  ghostsByKey, drawReplica, drawRuler, describeOffset } from "./logaxis.js";
import { createChart, fitCanvas } from "./chart.js";
import { wireAxis, wireLedger } from "./axisinput.js";
import { minIsr, unclean } from "./topicconfig.js";
import { t, N_, known } from "../i18n.js";
import { elrEnabled } from "../kraft.js";
import { epochColor } from "../palette.js";
import { isOffline, isUnderReplicated, leaderGone } from "../health.js";
import { rackOf, sameRack, sameRackWarnings } from "../zones.js";

export { minIsr, unclean };

function setHidden(el, hidden) { if (el.hidden !== hidden) el.hidden = hidden; }

/** Whether the controller has created the partition: its state znode exists (ZooKeeper eras), or
 *  its PartitionRecord is committed (KRaft eras: partition epoch -1 before). */
function created(p) { return p.zk_version !== undefined ? p.zk_version !== -1 : p.partition_epoch !== -1; }

const ROW_H = 22;          // a strip's height
const PITCH = 26;          // one replica row (CSS: .prows grid-auto-rows)
const RULER_H = 16;

// docs/model.md §17.2: the znode's ISR is the committed one; a change the leader proposed to the
// controller (AlterIsr / AlterPartition) stays pending until the controller answers.
const PENDING_TITLE = t("acks=all and min.insync.replicas use the committed ISR until the controller answers; the high watermark already uses the maximal ISR (committed plus a pending newcomer)");

// the kinds of ISR change a leader proposes (isr_state.pending), as msgids that known() finds
const PENDING_KINDS = [N_("shrink"), N_("expand")];

function pendingText(p, meta) {
  const st = p.isr_state;
  if (!st || !st.pending) return "";
  const proposed = st.proposed ? t(" → proposed [{isr}]", { isr: list(st.proposed) }) : "";
  const api = (meta && meta.alter_isr_api) || "AlterIsr";
  return proposed + t(" (pending {change}, {api} waiting for the controller)", { change: known(st.pending), api });
}

/** The strips' colour key: one swatch per leader epoch a record on screen can have been written
 *  in (0 .. the highest current leader epoch; the palette repeats after EPOCH_KEY_MAX). */
const EPOCH_KEY_MAX = 8;
let epochKeyDrawn = -1;
function drawEpochKey(maxEpoch) {
  const top = Math.min(maxEpoch, EPOCH_KEY_MAX - 1);
  if (top === epochKeyDrawn) return;
  epochKeyDrawn = top;
  const swatches = [];
  for (let e = 0; e <= top; e++) swatches.push(h("i.sw.epoch", { style: { background: epochColor(e) }, title: `leader epoch ${e}` }), `${e} `);
  document.getElementById("epoch-key").replaceChildren(t("colour = leader epoch") + " ", ...swatches,
    maxEpoch > top ? "… · " : "· ");
}

export function createPartitions(app) {
  const listEl = document.getElementById("partition-list");
  const summary = document.getElementById("partition-summary");
  const filterEl = document.getElementById("partition-filter");
  const tooltip = document.getElementById("tooltip");
  const cards = new Map();         // key -> card element
  const chart = createChart(app);
  let filter = "all";
  filterEl.addEventListener("change", () => { filter = filterEl.value; app.requestRender(true); });
  let widthKey = 0, stripW = 0;
  new ResizeObserver(() => { widthKey++; stripW = 0; app.requestRender(true); }).observe(listEl);
  // cards outside the viewport are not redrawn until they scroll into view
  const visible = new Set();
  const io = new IntersectionObserver(entries => {
    let wake = false;
    for (const e of entries) {
      // a card replaced by a new one of the same key reports "not intersecting" after the new
      // one reported "intersecting": only cards still on the page count
      if (!e.target.isConnected) continue;
      const key = e.target.dataset.key;
      if (e.isIntersecting) { visible.add(key); if (e.target.__stale) wake = true; }
      else visible.delete(key);
    }
    if (wake) app.requestRender();
  }, { root: document.getElementById("main"), rootMargin: "300px 0px" });

  function createGroup(topic) {
    const el = h("div.topic-group", { dataset: { topic: topic.name } },
      h("div.topic-head", null, h("span.tname", { text: topic.name }), h("span.dim.small.tfacts")),
      h("div.topic-cards"));
    return el;
  }

  function updateGroup(el, topic, store) {
    const n = topic.partitions;
    const facts = (n === 1 ? t("{n} partition", { n }) : t("{n} partitions", { n })) + ` · RF ${topic.replication_factor}`
      + ` · min.insync.replicas=${minIsr(store, topic.name)}` + ` · unclean.leader.election.enable=${unclean(store, topic.name)}`;
    setText(el.querySelector(".tfacts"), facts);
  }

  function createCard(p) {
    const card = h("div.pcard", { dataset: { key: p.key } });
    io.observe(card);
    card.__stale = true;
    const head = h("div.phead", { title: t("Partition actions"), onclick: e => app.partitionMenu(card.dataset.key, e.currentTarget) },
      h("span.pkey"), h("span.facts"), h("span.badges"));
    const rows = h("div.prows");
    // one canvas per partition for all its replicas' strips (fewer layers for the compositor)
    const canvas = h("canvas.pstrip", { height: ROW_H, title: "" });
    const ruler = h("canvas.pruler", { height: RULER_H });
    const follow = h("button.small.pfollow", { type: "button", title: t("Show every offset and follow the log's tail (double-click the strips)"),
      onclick: () => resetAxis(card.dataset.key) });
    const axisLabel = h("div.paxis-label", null, h("span.dim", { text: t("offsets") }));
    const axisInfo = h("div.paxis-info", null, follow, h("span.dim.paxis-range"));
    wireAxis(app, card, canvas, { pitch: PITCH, axis: key => axisOf(key), tooltip, redraw: () => app.requestRender(true),
      describe: (key, broker, x, w) => describe(card, broker, x, w) });
    rows.append(canvas, axisLabel, ruler, axisInfo);
    card.append(head, rows);
    card.__rows = new Map();
    card.__rowsEl = rows;
    card.__canvas = canvas;
    card.__axisEls = [axisLabel, ruler, axisInfo];
    return card;
  }

  function createRow(card, broker, index) {
    const label = h("div.prow-label", { title: t("Broker actions"), onclick: e => app.brokerMenu(broker, e.currentTarget),
      style: { gridRow: String(index + 1), gridColumn: "1" } },
      h("span.bid", { text: "b" + broker }), h("span.crown", { text: "♛", hidden: true }), h("span.isr"));
    const info = h("div.prow-info", { style: { gridRow: String(index + 1), gridColumn: "3" } },
      h("span.nums", null, "LEO ", h("b.leo"), " · HW ", h("b.hw")),
      h("span.lag", null, h("span.lagbar", null, h("div")), h("span.lagtext")));
    const row = { label, info, index, card, drawn: "" };
    card.__rowsEl.append(label, info);
    return row;
  }

  function updateCard(card, p, store, force) {
    const hl = store.ui.highlight;
    const offline = isOffline(store, p);
    const cls = "pcard" + (offline && created(p) ? " offline" : "") + (hl.partitions.has(p.key) ? " hl" : "");
    if (card.className !== cls) card.className = cls;
    setText(card.querySelector(".pkey"), p.key);
    const facts = card.querySelector(".facts");
    const pending = pendingText(p, store.meta);
    // KRaft: the partition epoch of the metadata record instead of the znode's version, and with
    // Eligible Leader Replicas (KIP-966) the ELR and last known ELR the controller keeps
    const kraft = Boolean(store.quorum);
    const version = kraft ? ["partition epoch", p.partition_epoch] : ["zkVersion", p.zk_version];
    const elr = kraft && elrEnabled(store.meta) ? ` · ELR [${list(p.elr)}] · LastKnownElr [${list(p.last_known_elr)}]` : "";
    const factsText = `leader ${p.leader === -1 ? "none" : p.leader} · epoch ${p.leader_epoch} · ${version[0]} ${version[1]} · ISR [${list(p.isr)}]${pending}${elr} · replicas [${list(p.replicas)}]`;
    if (facts.__text !== factsText) {
      facts.__text = factsText;
      facts.replaceChildren("leader ", h("b", { text: p.leader === -1 ? "none" : String(p.leader) }), " · epoch ",
        h("b", { text: String(p.leader_epoch) }), ` · ${version[0]} `, h("b", { text: String(version[1]) }),
        " · ISR ", h("b", { text: `[${list(p.isr)}]` }),
        ...(pending ? [h("span.pending-isr", { text: pending, title: PENDING_TITLE })] : []),
        ...(elr ? [" · ELR ", h("b.elr", { text: `[${list(p.elr)}]`, title: t("Eligible Leader Replicas: left the ISR while it was at or below min.insync.replicas; electable cleanly") }),
          " · LastKnownElr ", h("b", { text: `[${list(p.last_known_elr)}]`, title: t("ELR members fenced while the partition had no ISR: the last known leader candidates") })] : []),
        ` · replicas [${list(p.replicas)}]`);
    }
    const badges = [];
    const min = minIsr(store, p.topic);
    const made = created(p);
    // the chips' words are upper case in English (a state at a glance); their msgids are lower
    // case, so that the catalog's check of Kafka's upper-case names does not take them for ones
    if (!made) badges.push([t("not created yet").toUpperCase(), "info", store.quorum ? t("no PartitionRecord committed yet: the controller has not created it")
      : t("no state znode yet: the controller has not elected its first leader")]);
    else if (offline) badges.push([t("offline").toUpperCase(), "bad", t("no leader the controller holds live: produce and fetch fail")]);
    else if (leaderGone(store, p)) badges.push([t("leader {id} down", { id: p.leader }).toUpperCase(), "bad", store.quorum
      ? t("the leader's broker is down; the controller moves leadership once it fences the broker (not counted offline until then)")
      : t("the leader's broker is down; the controller moves leadership once its ZooKeeper session expires (not counted offline until then)")]);
    if (p.leader_recovery_state === 1 || p.leader_recovery_state === "RECOVERING") {
      badges.push([t("recovering").toUpperCase(), "warn", t("KIP-704: elected uncleanly; the leader is recovering its log and the ISR cannot grow until it is done (leader_recovery_state 1)")]);
    } else if (made && isUnderReplicated(store, p)) badges.push([t("under-replicated").toUpperCase(), "warn", t("the leader's ISR is smaller than the replica list")]);
    if (made && !offline && !leaderGone(store, p) && p.isr.length < min) {
      badges.push([`ISR < min.insync.replicas=${min}`, "bad", t("acks=all produce fails with NOT_ENOUGH_REPLICAS")]);
    }
    // replicas sharing a zone (docs/model.md §21.6): one zone failure takes them all at once
    for (const w of sameRackWarnings(store, p, min)) badges.push([`⚠ ${w.short}`, "warn.zone-warn", w.long]);
    const badgeText = badges.map(b => b[0]).join("|");
    const badgeEl = card.querySelector(".badges");
    if (badgeEl.__text !== badgeText) {
      badgeEl.__text = badgeText;
      badgeEl.replaceChildren(...badges.map(([text, k, title]) => h("span.chip." + k, { text, title })));
    }
    const range = logRange(p.replica_state);
    const axis = axisOf(p.key);
    const win = axisWindow(range, axis);
    card.__range = range;
    card.__win = win;
    card.__p = p;
    const ref = referenceReplica(p);
    const ghosts = ghostsFor(store, p.key);
    const replicaKey = p.replicas.join(",");
    if (card.__replicaKey !== replicaKey) {      // a new cluster reuses the key: rebuild the rows
      card.__replicaKey = replicaKey;
      card.__rows.clear();
      card.__rowsEl.replaceChildren(card.__canvas, ...card.__axisEls);
      card.__order = p.replica_state.map(r => r.broker);
      const n = p.replica_state.length;
      card.__canvas.style.gridRow = `1 / span ${n}`;
      card.__axisEls.forEach((el, i) => { el.style.gridRow = String(n + 1); el.style.gridColumn = String(i + 1); });
    }
    sizeCanvas(card, p.replica_state.length);
    for (const r of p.replica_state) {
      let row = card.__rows.get(r.broker);
      if (!row) { row = createRow(card, r.broker, card.__rows.size); card.__rows.set(r.broker, row); }
      updateRow(row, r, p, store, force);
      drawRow(row, r, ref, ghosts.get(r.broker), win, axis.mark, force);
    }
    const rulerKey = `${stripW}|${win.lo}|${win.span}`;
    if (force || card.__rulerKey !== rulerKey) {
      card.__rulerKey = rulerKey;
      drawRuler(fitCanvas(card.__axisEls[1], stripW || 300, RULER_H).c, win, stripW || 300, RULER_H);
    }
    const [, , info] = card.__axisEls;
    setText(info.querySelector(".pfollow"), axis.follow ? (axis.span === null ? t("all offsets") : t("following the tail")) : t("⇥ follow the tail"));
    setClass(info.querySelector(".pfollow"), "on", axis.follow);
    setText(info.querySelector(".paxis-range"), `${Math.max(0, Math.ceil(win.lo))}–${Math.floor(win.hi) - 1}`);
    card.dataset.axis = `${win.lo} ${win.span} ${stripW || 300}`;   // the layout, for tests and the curious
  }

  function updateRow(row, r, p, store) {
    const zkLeader = p.leader === r.broker;
    const zombie = r.is_leader && !zkLeader;
    setClass(row.label, "down", !r.running);
    const rack = rackOf(store, r.broker);
    const labelTitle = rack === null ? t("Broker actions") : t("Broker {id}, zone {rack} (click: broker actions)", { id: r.broker, rack });
    if (row.label.title !== labelTitle) row.label.title = labelTitle;
    if (row.crownShown !== zkLeader) { row.label.querySelector(".crown").hidden = !zkLeader; row.crownShown = zkLeader; }
    const isr = row.label.querySelector(".isr");
    // a pending AlterIsr (docs/model.md §17.2): still in the committed ISR but proposed out, or
    // proposed in but not committed yet
    const st = p.isr_state, proposed = st && st.pending && st.proposed;
    const moving = proposed ? (r.in_isr && !proposed.includes(r.broker) ? "↘" : !r.in_isr && proposed.includes(r.broker) ? "↗" : "") : "";
    const eligible = !r.in_isr && Array.isArray(p.elr) && p.elr.includes(r.broker);   // KIP-966
    setText(isr, (r.in_isr ? "ISR" : eligible ? "ELR" : t("out")) + moving);
    setClass(isr, "elr", eligible);
    isr.title = !moving ? "" : moving === "↘" ? t("pending {change}: proposed out of the ISR, waiting for the controller", { change: known(st.pending) })
      : t("pending {change}: proposed into the ISR, waiting for the controller", { change: known(st.pending) });
    setClass(isr, "out", !r.in_isr && !eligible);
    setClass(row.label, "hl", store.ui.highlight.brokers.has(r.broker) && store.ui.highlight.partitions.has(p.key));
    if (!row.el) row.el = { leo: row.info.querySelector(".leo"), hw: row.info.querySelector(".hw"), lag: row.info.querySelector(".lag"),
      text: row.info.querySelector(".lagtext"), bar: row.info.querySelector(".lagbar"), crown: row.label.querySelector(".crown"), isr: row.label.querySelector(".isr") };
    setText(row.el.leo, r.leo);
    setText(row.el.hw, r.hw);
    const lag = row.el.lag;
    const text = row.el.text;
    if (!r.running) {
      setHidden(row.el.bar, true);
      const b = store.brokers.get(r.broker);
      const state = b ? b.state : "stopped";
      setText(text, state === "starting" ? t("broker starting") : state === "paused" ? t("broker paused") : t("broker down (log on disk)"));
    } else if (store.quorum && (store.brokers.get(r.broker) || {}).fenced) {
      // KRaft: a running broker the controller fenced is in no ISR and leads nothing until unfenced
      setHidden(row.el.bar, true);
      setText(text, t("broker fenced"));
    } else if (zkLeader) {
      setHidden(row.el.bar, true);
      setText(text, r.is_leader ? t("leader") : t("named leader, not acting yet"));
    } else if (zombie) {
      setHidden(row.el.bar, true);
      setText(text, t("⚠ thinks it leads (epoch {epoch})", { epoch: r.local_leader_epoch }));
    } else if (r.lag) {
      const f = lagFraction(r.lag);
      const bar = row.el.bar;
      setHidden(bar, false);
      setStyle(bar.firstChild, "width", Math.min(100, f * 100).toFixed(0) + "%");
      const cls = "lagbar" + (f >= 1 ? " over" : f >= 0.5 ? " mid" : "");
      if (bar.className !== cls) bar.className = cls;
      setText(text, r.lag.ms_behind === null ? t("never caught up") : `${shortSeconds(r.lag.ms_behind)} / ${shortSeconds(r.lag.lag_max_ms)}`);
    } else {
      setHidden(row.el.bar, true);
      setText(text, t("follower"));
    }
    setClass(text, "note", zombie);
  }

  function sizeCanvas(card, n) {
    const canvas = card.__canvas;
    if (fitCanvas(canvas, stripW || 300, n * PITCH).resized) for (const row of card.__rows.values()) row.drawn = "";
  }

  function drawRow(row, r, ref, ghosts, win, mark, force) {
    const w = stripW || 300;
    const key = [w, win.lo, win.span, r.leo, r.hw, r.flushed_offset, r.log_start_offset, r.running, JSON.stringify(r.segments),
      r.tail[0], r.tail[1].join(), ref ? ref.broker + JSON.stringify(ref.segments) + ref.tail[1].join() : "",
      ghosts ? ghosts.length : 0, mark ? mark.offset : ""].join("|");
    if (!force && row.drawn === key) return;
    row.drawn = key;
    const dpr = window.devicePixelRatio || 1;
    const c = row.card.__canvas.getContext("2d");
    c.setTransform(dpr, 0, 0, dpr, 0, dpr * (row.index * PITCH + (PITCH - ROW_H) / 2));
    c.clearRect(0, -(PITCH - ROW_H) / 2, w, PITCH);
    drawReplica(c, r, ref, ghosts, win, w, ROW_H, mark);
  }

  function describe(card, broker, x, w) {
    const p = card.__p, win = card.__win;
    const r = p && p.replica_state.find(s => s.broker === broker);
    if (!r || !win) return null;
    return describeOffset(p, r, offsetAtX(x, win, w), referenceReplica(p), ghostsFor(app.store, p.key).get(broker)).join("\n");
  }

  // per partition: the axis the user zoomed and panned (state; the window is derived each render)
  const axes = new Map();
  function axisOf(key) {
    let a = axes.get(key);
    if (!a) { a = newAxisState(); axes.set(key, a); }
    return a;
  }
  function resetAxis(key) { axes.set(key, newAxisState()); app.requestRender(true); }

  let ghostCache = { events: null, n: -1, map: new Map() };
  function ghostsFor(store, key) {
    if (ghostCache.events !== store.events || ghostCache.n !== store.events.length) {
      ghostCache = { events: store.events, n: store.events.length, map: ghostsByKey(store.events) };
    }
    return ghostCache.map.get(key) || new Map();
  }

  let lastWidthKey = -1;
  const pending = new Set();     // partitions changed since they were last drawn
  let skipped = 0;
  /** `every`: draw changed partitions at most every n-th call (the page lowers the refresh rate
   *  of the log strips when frames get expensive, so animation stays smooth). */
  function render(store, changes, force, every = 1) {
    if (!store.meta) return;
    for (const k of changes.changed) if (k.startsWith("p:")) pending.add(k.slice(2));
    if (!force && widthKey === lastWidthKey && ++skipped < every) {
      if (pending.size) app.requestRender();     // what is skipped now is drawn on a later frame
      return;
    }
    skipped = 0;
    const all = sortedPartitions(store);
    const hl = store.ui.highlight;
    const shown = all.filter(p => filter === "all" || (filter === "urp" && isUnderReplicated(store, p))
      || (filter === "offline" && isOffline(store, p)) || (filter === "highlighted" && hl.partitions.has(p.key)));
    const live = all.filter(created);                            // partitions the controller has created
    // Kafka's two metrics, from the same state; a crashed leader no metric counts yet is named apart
    const offline = live.filter(p => isOffline(store, p)).length, urp = live.filter(p => isUnderReplicated(store, p)).length;
    const gone = live.filter(p => leaderGone(store, p)).length;
    const crowded = all.filter(p => Object.keys(sameRack(store, p)).length).length;
    setText(summary, (all.length === 1 ? t("{n} partition · {urp} under-replicated · {offline} offline", { n: 1, urp, offline })
      : t("{n} partitions · {urp} under-replicated · {offline} offline", { n: all.length, urp, offline }))
      + (gone ? t(" · {n} with its leader down (not counted until the controller notices)", { n: gone }) : "")
      + (crowded ? t(" · ⚠ {n} with two replicas in one zone: one zone failure takes both", { n: crowded }) : ""));
    setClass(summary, "zone-warn", crowded > 0);
    drawEpochKey(Math.max(0, ...all.map(p => p.leader_epoch || 0)));
    let widthChanged = widthKey !== lastWidthKey;
    lastWidthKey = widthKey;
    if (!stripW) {       // one layout read per resize, before any write of this render
      const strip = listEl.querySelector(".pstrip");
      stripW = strip && strip.clientWidth ? strip.clientWidth : 0;
      if (stripW) { widthChanged = true; } else app.requestRender();
    }
    const topics = store.meta.topics.filter(t => shown.some(p => p.topic === t.name));
    reconcile(listEl, topics, t => t.name, createGroup, (el, t) => updateGroup(el, t, store));
    for (const topic of topics) {
      const groupEl = listEl.__keyed.get(topic.name);
      const container = groupEl.querySelector(".topic-cards");
      const parts = shown.filter(p => p.topic === topic.name);
      reconcile(container, parts, p => p.key, createCard, (card, p) => {
        cards.set(p.key, card);
        const due = force || widthChanged || card.__stale || pending.has(p.key) || !card.__p;
        pending.delete(p.key);
        if (!due) return;
        if (card.__p && !visible.has(p.key)) { card.__stale = true; card.__pending = p; return; }
        card.__stale = false;
        updateCard(card, p, store, force || widthChanged);
      });
    }
    // the time chart goes with the focused partition: the highlighted one, else the first shown
    const focused = shown.find(p => hl.partitions.has(p.key)) || shown[0];
    const card = focused && cards.get(focused.key);
    if (card && card.isConnected && stripW) chart.render(card, focused, store, stripW + 64 + 196 + 16, force || widthChanged);
    else chart.detach();
  }

  function scrollTo(key) {
    const card = listEl.querySelector(`.pcard[data-key="${CSS.escape(key)}"]`);
    if (card) card.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  /** Show record `id` at `offset` of partition `key`: zoom its axis there, mark it, scroll to it. */
  function focusRecord(key, offset, id) {
    const card = cards.get(key);
    const p = app.store.partitions.get(key);
    if (!p || offset === null || offset === undefined) return false;
    focusAxis(axisOf(key), logRange(p.replica_state), offset, id);
    if (filter !== "all") { filter = "all"; filterEl.value = "all"; }
    app.requestRender(true);
    requestAnimationFrame(() => scrollTo(key));
    return !!card;
  }

  wireLedger(app, focusRecord);

  return { render, scrollTo, focusRecord };
}

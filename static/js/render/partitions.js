// Partitions: for each replica, its log as a strip of offsets coloured by leader epoch (solid below
// its high watermark = committed, faint above), the HW and LEO markers, ISR membership, the
// leader's crown and the lag bar against replica.lag.time.max.ms.
import { h, reconcile, setText, setClass, setStyle } from "../dom.js";

function setHidden(el, hidden) { if (el.hidden !== hidden) el.hidden = hidden; }
import { shortSeconds, list } from "../format.js";
import { logWindow, cellX, offsetAt, epochAt, idAt, lagFraction } from "../geometry.js";
import { epochColor } from "../palette.js";
import { sortedPartitions } from "../store.js";

const CELL_MIN_PX = 7;
const ROW_H = 22;          // a strip's height
const PITCH = 26;          // one replica row (CSS: .prows grid-auto-rows)

export function createPartitions(app) {
  const listEl = document.getElementById("partition-list");
  const summary = document.getElementById("partition-summary");
  const filterEl = document.getElementById("partition-filter");
  const tooltip = document.getElementById("tooltip");
  const groups = new Map();        // topic -> {el, cards}
  const cards = new Map();         // key -> card element
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
    const facts = `${topic.partitions} partition${topic.partitions === 1 ? "" : "s"} · RF ${topic.replication_factor}`
      + ` · min.insync.replicas=${minIsr(store, topic.name)}` + ` · unclean.leader.election.enable=${unclean(store, topic.name)}`;
    setText(el.querySelector(".tfacts"), facts);
  }

  function createCard(p) {
    const card = h("div.pcard", { dataset: { key: p.key } });
    io.observe(card);
    card.__stale = true;
    const head = h("div.phead", { title: "Partition actions", onclick: e => app.partitionMenu(card.dataset.key, e.currentTarget) },
      h("span.pkey"), h("span.facts"), h("span.badges"));
    const rows = h("div.prows");
    // one canvas per partition for all its replicas' strips (fewer layers for the compositor)
    const canvas = h("canvas.pstrip", { height: ROW_H });
    canvas.addEventListener("mousemove", e => {
      const order = card.__order || [];
      const broker = order[Math.floor(e.offsetY / PITCH)];
      if (broker === undefined) { tooltip.hidden = true; return; }
      hover(e, card, broker);
    });
    canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    rows.appendChild(canvas);
    card.append(head, rows);
    card.__rows = new Map();
    card.__rowsEl = rows;
    card.__canvas = canvas;
    return card;
  }

  function createRow(card, broker, index) {
    const label = h("div.prow-label", { title: "Broker actions", onclick: e => app.brokerMenu(broker, e.currentTarget),
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
    const cls = "pcard" + (p.offline ? " offline" : "") + (hl.partitions.has(p.key) ? " hl" : "");
    if (card.className !== cls) card.className = cls;
    setText(card.querySelector(".pkey"), p.key);
    const facts = card.querySelector(".facts");
    const factsText = `leader ${p.leader === -1 ? "none" : p.leader} · epoch ${p.leader_epoch} · zkVersion ${p.zk_version} · ISR [${list(p.isr)}] · replicas [${list(p.replicas)}]`;
    if (facts.__text !== factsText) {
      facts.__text = factsText;
      facts.replaceChildren("leader ", h("b", { text: p.leader === -1 ? "none" : String(p.leader) }), " · epoch ",
        h("b", { text: String(p.leader_epoch) }), " · zkVersion ", h("b", { text: String(p.zk_version) }),
        " · ISR ", h("b", { text: `[${list(p.isr)}]` }), ` · replicas [${list(p.replicas)}]`);
    }
    const badges = [];
    const min = minIsr(store, p.topic);
    if (p.offline) badges.push(["OFFLINE", "bad", "no live leader: produce and fetch fail"]);
    else if (p.isr.length < p.replicas.length) badges.push(["UNDER-REPLICATED", "warn", "ISR smaller than the replica list"]);
    if (!p.offline && p.isr.length < min) badges.push([`ISR < min.insync.replicas=${min}`, "bad", "acks=all produce fails with NOT_ENOUGH_REPLICAS"]);
    const badgeText = badges.map(b => b[0]).join("|");
    const badgeEl = card.querySelector(".badges");
    if (badgeEl.__text !== badgeText) {
      badgeEl.__text = badgeText;
      badgeEl.replaceChildren(...badges.map(([t, k, title]) => h("span.chip." + k, { text: t, title })));
    }
    const win = logWindow(p.replica_state, Math.max(8, Math.floor(stripW / CELL_MIN_PX)));
    card.__win = win;
    card.__p = p;
    const leaderState = p.replica_state.find(r => r.broker === p.leader) || null;
    const replicaKey = p.replicas.join(",");
    if (card.__replicaKey !== replicaKey) {      // a new cluster reuses the key: rebuild the rows
      card.__replicaKey = replicaKey;
      card.__rows.clear();
      card.__rowsEl.replaceChildren(card.__canvas);
      card.__order = p.replica_state.map(r => r.broker);
      card.__canvas.style.gridRow = `1 / span ${p.replica_state.length}`;
    }
    sizeCanvas(card, p.replica_state.length);
    for (const r of p.replica_state) {
      let row = card.__rows.get(r.broker);
      if (!row) { row = createRow(card, r.broker, card.__rows.size); card.__rows.set(r.broker, row); }
      updateRow(row, r, p, store, win, leaderState, force);
    }
  }

  function updateRow(row, r, p, store, win, leaderState, force) {
    const zkLeader = p.leader === r.broker;
    const zombie = r.is_leader && !zkLeader;
    setClass(row.label, "down", !r.running);
    if (row.crownShown !== zkLeader) { row.label.querySelector(".crown").hidden = !zkLeader; row.crownShown = zkLeader; }
    const isr = row.label.querySelector(".isr");
    setText(isr, r.in_isr ? "ISR" : "out");
    setClass(isr, "out", !r.in_isr);
    setClass(row.label, "hl", store.ui.highlight.brokers.has(r.broker) && store.ui.highlight.partitions.has(p.key));
    if (!row.el) row.el = { leo: row.info.querySelector(".leo"), hw: row.info.querySelector(".hw"), lag: row.info.querySelector(".lag"),
      text: row.info.querySelector(".lagtext"), bar: row.info.querySelector(".lagbar"), crown: row.label.querySelector(".crown"), isr: row.label.querySelector(".isr") };
    setText(row.el.leo, r.leo);
    setText(row.el.hw, r.hw);
    const lag = row.el.lag;
    const text = row.el.text;
    if (!r.running) {
      setHidden(row.el.bar, true);
      setText(text, "broker down (log on disk)");
    } else if (zkLeader) {
      setHidden(row.el.bar, true);
      setText(text, r.is_leader ? "leader" : "named leader, not acting yet");
    } else if (zombie) {
      setHidden(row.el.bar, true);
      setText(text, `⚠ thinks it leads (epoch ${r.local_leader_epoch})`);
    } else if (r.lag) {
      const f = lagFraction(r.lag);
      const bar = row.el.bar;
      setHidden(bar, false);
      setStyle(bar.firstChild, "width", Math.min(100, f * 100).toFixed(0) + "%");
      const cls = "lagbar" + (f >= 1 ? " over" : f >= 0.5 ? " mid" : "");
      if (bar.className !== cls) bar.className = cls;
      setText(text, r.lag.ms_behind === null ? "never caught up" : `${shortSeconds(r.lag.ms_behind)} / ${shortSeconds(r.lag.lag_max_ms)}`);
    } else {
      setHidden(row.el.bar, true);
      setText(text, "follower");
    }
    setClass(text, "note", zombie);
    drawStrip(row, r, p, win, leaderState, force);
  }

  function sizeCanvas(card, n) {
    const canvas = card.__canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = stripW || 300, hgt = n * PITCH;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr);        // resizing clears it: every row is drawn again
      canvas.height = Math.round(hgt * dpr);
      canvas.style.height = hgt + "px";
      for (const row of card.__rows.values()) row.drawn = "";
    }
  }

  function drawStrip(row, r, p, win, leaderState, force) {
    const canvas = row.card.__canvas;
    const w = stripW || 300;
    const key = `${w}|${win.lo}|${win.cells}|${r.leo}|${r.hw}|${r.flushed_offset}|${r.log_start_offset}|${r.running}|${r.segments.length}|${r.tail[0]}|${r.tail[1].length}|${leaderState ? leaderState.leo : ""}|${leaderState ? leaderState.tail[1][leaderState.tail[1].length - 1] : ""}|${r.tail[1][r.tail[1].length - 1]}`;
    if (!force && row.drawn === key) return;
    row.drawn = key;
    const dpr = window.devicePixelRatio || 1;
    const c = canvas.getContext("2d");
    c.setTransform(dpr, 0, 0, dpr, 0, row.index * PITCH + (PITCH - ROW_H) / 2);
    c.clearRect(0, -(PITCH - ROW_H) / 2, w, PITCH);
    c.globalAlpha = r.running ? 1 : 0.5;
    const cw = w / win.cells;
    const gap = cw >= 5 ? 1 : 0;
    const y = 4, hgt = 14;
    // background track
    c.fillStyle = "#10151d";
    c.fillRect(0, y, w, hgt);
    // runs of epochs, committed part solid, uncommitted part faint
    for (const [st, e, epoch] of r.segments) {
      const a = Math.max(st, win.lo), b = Math.min(e, win.hi);
      if (a >= b) continue;
      const color = epochColor(epoch);
      const split = Math.max(a, Math.min(b, r.hw));
      c.fillStyle = color;
      if (split > a) c.fillRect((a - win.lo) * cw, y, (split - a) * cw, hgt);
      if (b > split) {
        c.globalAlpha = (r.running ? 1 : 0.5) * 0.32;
        c.fillRect((split - win.lo) * cw, y, (b - split) * cw, hgt);
        c.globalAlpha = r.running ? 1 : 0.5;
        c.strokeStyle = color;
        c.lineWidth = 1;
        c.strokeRect((split - win.lo) * cw + 0.5, y + 0.5, (b - split) * cw - 1, hgt - 1);
      }
    }
    if (gap) {          // one path of 1 px gaps between cells
      const lo = Math.max(win.lo, r.log_start_offset), hi = Math.min(win.hi, r.leo);
      if (hi > lo) {
        c.strokeStyle = "#10151d";
        c.lineWidth = 1;
        c.beginPath();
        for (let o = lo + 1; o < hi; o++) { const x = Math.round((o - win.lo) * cw) - 0.5; c.moveTo(x, y); c.lineTo(x, y + hgt); }
        c.stroke();
      }
    }
    // records that differ from the leader's at the same offset (divergent logs)
    if (leaderState && leaderState.broker !== r.broker) {
      c.fillStyle = "#ff5d6c";
      const [first, ids] = r.tail;
      for (let i = 0; i < ids.length; i++) {
        const o = first + i;
        if (o < win.lo || o >= win.hi) continue;
        const other = idAt(leaderState.tail, o);
        if (other !== null && other !== ids[i]) c.fillRect((o - win.lo) * cw, y + hgt + 1, Math.max(2, cw - gap), 3);
      }
    }
    // hidden older offsets
    if (win.lo > r.log_start_offset && r.leo > win.lo) {
      c.fillStyle = "#8b99ad";
      c.font = "9px ui-monospace, monospace";
      c.fillText("…", 1, y + 11);
    }
    // flushed (fsync'd) point
    if (r.flushed_offset < r.leo && r.flushed_offset >= win.lo) {
      const fx = cellX(r.flushed_offset, win, 0, w);
      c.fillStyle = "#8b99ad";
      c.fillRect(fx - 0.5, y + hgt, 1, 4);
    }
    // HW and LEO markers
    const hx = cellX(Math.max(win.lo, r.hw), win, 0, w);
    c.fillStyle = "#ffffff";
    c.fillRect(Math.round(hx) - 1, 1, 2, ROW_H - 2);
    c.beginPath(); c.moveTo(hx - 4, 0); c.lineTo(hx + 4, 0); c.lineTo(hx, 4); c.fill();
    const lx = cellX(Math.max(win.lo, r.leo), win, 0, w);
    c.strokeStyle = "#ffb547"; c.lineWidth = 1.5; c.setLineDash([3, 2]);
    c.beginPath(); c.moveTo(lx, 1); c.lineTo(lx, ROW_H - 1); c.stroke(); c.setLineDash([]);
    c.globalAlpha = 1;
  }

  function hover(e, card, broker) {
    const p = card.__p, win = card.__win;
    if (!p || !win) return;
    const r = p.replica_state.find(x => x.broker === broker);
    const o = offsetAt(e.offsetX, win, 0, e.currentTarget.clientWidth);
    const lines = [`broker ${broker} · ${p.key} · offset ${o}`];
    if (o < r.log_start_offset) lines.push("below the log start offset");
    else if (o >= r.leo) lines.push(`not in this log (LEO ${r.leo})`);
    else {
      const epoch = epochAt(r.segments, o);
      lines.push(`leader epoch ${epoch}`);
      const id = idAt(r.tail, o);
      if (id) lines.push(`record ${id}`);
      lines.push(o < r.hw ? `committed (below HW ${r.hw})` : `not committed yet (HW ${r.hw})`);
      if (o >= r.flushed_offset) lines.push("not flushed to disk: a power failure loses it");
    }
    lines.push(`LEO ${r.leo} · HW ${r.hw} · log start ${r.log_start_offset}`);
    tooltip.textContent = lines.join("\n");
    tooltip.hidden = false;
    tooltip.style.left = Math.min(window.innerWidth - 300, e.clientX + 14) + "px";
    tooltip.style.top = (e.clientY + 14) + "px";
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
    const shown = all.filter(p => filter === "all" || (filter === "urp" && p.isr.length < p.replicas.length)
      || (filter === "offline" && p.offline) || (filter === "highlighted" && hl.partitions.has(p.key)));
    const offline = all.filter(p => p.offline).length, urp = all.filter(p => p.isr.length < p.replicas.length).length;
    setText(summary, `${all.length} partition${all.length === 1 ? "" : "s"} · ${urp} under-replicated · ${offline} offline`);
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
  }

  function scrollTo(key) {
    const card = listEl.querySelector(`.pcard[data-key="${CSS.escape(key)}"]`);
    if (card) card.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  return { render, scrollTo };
}

export function minIsr(store, topic) {
  const t = store.meta && store.meta.topics.find(x => x.name === topic);
  if (t && t.config && t.config["min.insync.replicas"] !== undefined) return t.config["min.insync.replicas"];
  return store.meta ? store.meta.config["min.insync.replicas"] : 1;
}

export function unclean(store, topic) {
  const t = store.meta && store.meta.topics.find(x => x.name === topic);
  if (t && t.config && t.config["unclean.leader.election.enable"] !== undefined) return t.config["unclean.leader.election.enable"];
  return store.meta ? store.meta.config["unclean.leader.election.enable"] : false;
}

// The cluster map: ZooKeeper (or, in KRaft eras, the controller voters), brokers, clients, and the
// messages flying between them; with racks, the brokers grouped in a box per zone (zone_map.js).
import { h, reconcile, setText, setClass, setStyle } from "../dom.js";
import { shortSeconds, hex } from "../format.js";
import { MAP, clusterLayout, messagePath, curvePoint, messageDuration, progress, sessionLeft, simNow, anchor } from "../geometry.js";
import { messageColor, messageKind, messageName, DROP_COLOR, MESSAGE_KINDS } from "../palette.js";
import { sortedBrokers } from "../store.js";
import { isKraft, dedicatedVoters } from "../kraft.js";
import { t } from "../i18n.js";
import { createVoterLayer, kraftLines, updateKraftLines, updateFencingDeadline } from "./quorum_map.js";
import { createZoneLayer } from "./zone_map.js";
import { zoneGroups } from "../zones.js";
import { readsLines } from "./clients.js";

const STATE_LABEL = { running: t("running"), starting: t("starting"), shutting_down: t("shutting down"), stopped: t("down"),
  halted: t("halted"), registration_failed: t("reg. failed"), paused: t("paused (GC)") };
// the ZooKeeper client's states (KeeperState, as the engine names them) on the card's session line
const ZK_STATE = { connecting: t("ZK connecting"), connected: t("ZK connected"), disconnected: t("ZK disconnected"),
  expired: t("ZK session expired"), closed: t("ZK closed") };
const zkState = s => ZK_STATE[s] || `ZK ${s}`;

// dedicated controller voters (KRaft) are numbered nodes too: "v:3000" rather than "b:3000"
let voterSet = new Set();
function nodeKey(n) {
  if (typeof n === "number") return (voterSet.has(n) ? "v:" : "b:") + n;
  if (n === "zk") return "zk";
  return "c:" + n;
}
/** A node as the map's labels name it. */
function nodeLabel(n) { return typeof n === "number" ? (voterSet.has(n) ? `controller ${n}` : `b${n}`) : String(n); }

export function createMap(app) {
  const root = document.getElementById("map");
  const nodesEl = document.getElementById("nodes");
  const canvas = document.getElementById("wire");
  const ctx = canvas.getContext("2d");
  let layout = null, layoutKey = "", width = 0, dpr = 1;
  // with zones, the height of a broker's slot: the tallest card drawn (a narrow card wraps its
  // lines, a KRaft card has more of them), measured after a layout and whenever a card resizes
  let cardH = MAP.brokerH;
  // a card that grows (a chip, a wrapped line) re-measures at once, paused or not
  const cardSizes = new ResizeObserver(entries => {
    for (const e of entries) if (!e.target.isConnected) cardSizes.unobserve(e.target);    // a card of an old run
    if (layout && layout.zones.length) fitCards();
  });
  const zkEl = h("div.node.zknode", { title: t("The ZooKeeper ensemble (click: the znode tree)"),
    onclick: () => app.showTab("zk") }, "ZooKeeper", h("span.sub"));
  nodesEl.appendChild(zkEl);
  const brokerLayer = h("div");
  const clientLayer = h("div");
  nodesEl.append(brokerLayer, clientLayer);
  const voters = createVoterLayer(app, nodesEl);
  const zoneLayer = createZoneLayer(app, nodesEl);

  const legend = document.getElementById("legend");
  // the ISR changes a leader asks the controller for (2.7+, docs/model.md §17), named while in flight
  const alterEl = h("span.inflight-alter#inflight-alter", { hidden: true, role: "status" });
  let legendMode = null;
  /** The message kinds the era sends (ZooKeeper or KRaft), then "dropped" and what is in flight. */
  function fillLegend(kraft) {
    if (legendMode === kraft) return;
    legendMode = kraft;
    const mode = kraft ? "kraft" : "zk";
    legend.replaceChildren(...MESSAGE_KINDS.filter(k => !k.mode || k.mode === mode)
      .map(k => h("span", { dataset: { kind: k.kind } }, h("i", { style: { background: k.color } }), k.label)),
    h("span", { title: t("Messages shorter than a frame are drawn in slow motion; filled = request, hollow = response") },
      h("i", { style: { background: DROP_COLOR } }), t("dropped")), alterEl);
  }
  fillLegend(false);

  new ResizeObserver(() => { layoutKey = ""; app.requestRender(); }).observe(root);

  function ensureLayout(store) {
    const ids = sortedBrokers(store).map(b => b.id);
    const clients = Array.from(store.clients.keys()).sort((a, b) => {
      const ta = store.clients.get(a).type, tb = store.clients.get(b).type;
      return ta === tb ? (a < b ? -1 : 1) : ta === "producer" ? -1 : 1;
    });
    const w = root.clientWidth, room = root.clientHeight;
    const vids = dedicatedVoters(store);
    voterSet = new Set(vids);
    const zones = zoneGroups(store, ids);
    const key = w + "|" + room + "|" + ids.join(",") + "|" + clients.join(",") + "|" + vids.join(",") + "|" + isKraft(store)
      + "|" + JSON.stringify(zones) + "|" + (zones.length ? cardH : "");
    if (key === layoutKey) return false;
    layoutKey = key;
    width = w;
    // the content sets the map's least and greatest height; the page's flex layout gives it the
    // room between (static/css/app.css #cluster): a short page has no empty band under its panels
    layout = clusterLayout(w, ids, clients, room, vids, zones, cardH);
    setStyle(root, "minHeight", layout.natural + "px");
    setStyle(root, "maxHeight", Math.round(layout.natural * MAP.maxStretch) + "px");
    dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(layout.height * dpr);
    return true;
  }

  function createBroker(b) {
    const el = h("div.node.broker", { dataset: { broker: b.id }, tabIndex: 0,
      onclick: e => app.brokerMenu(Number(el.dataset.broker), el, e),
      oncontextmenu: e => { e.preventDefault(); app.brokerMenu(Number(el.dataset.broker), { x: e.clientX, y: e.clientY }, e); } });
    el.append(
      h("div.row1", null, h("span.bname"), h("span.ctrl", { text: t("controller"), hidden: true, title: t("holds /controller") }), h("span.state")),
      h("div.zk", null, h("span.dot", { text: "●" }), h("span.zktext")),
      h("div.ttl", null, h("div")),
      kraftLines(),
      h("div.leads"),
      h("div.iso"));
    cardSizes.observe(el);
    return el;
  }

  function updateBroker(el, b, store, layoutChanged) {
    const box = layout.nodes["b:" + b.id];
    if (layoutChanged || el.__x !== box.x || el.__y !== box.y) {
      el.style.left = box.x + "px"; el.style.top = box.y + "px"; el.style.setProperty("--bw", box.w + "px");
      el.__x = box.x; el.__y = box.y;
    }
    el.className = "node broker s-" + b.state + (store.ui.selectedBroker === b.id ? " selected" : "")
      + (store.ui.highlight.brokers.has(b.id) ? " hl" : "");
    setText(el.querySelector(".bname"), "Broker " + b.id);
    const ctrl = el.querySelector(".ctrl");
    ctrl.hidden = !b.controller;
    setText(ctrl, box.w < 250 ? t("ctrl") : t("controller"));   // "controller" needs a wide card to stay on one line
    const stateText = b.state === "stopped" && b.net_state === "silent" ? t("power off") : (STATE_LABEL[b.state] || b.state);
    setText(el.querySelector(".state"), stateText);
    const kraft = el.querySelector(".kraft");
    kraft.hidden = !store.quorum;
    el.__wide = box.w >= 200;
    if (store.quorum) updateKraftLines(el, b, el.__wide);
    // leadership: what ZooKeeper says vs what the broker believes (a zombie believes more)
    const zkLeads = [], believes = [];
    for (const p of store.partitions.values()) {
      if (p.leader === b.id) zkLeads.push(p.key);
    }
    for (const key of b.leads || []) if (!zkLeads.includes(key)) believes.push(key);
    let leads = t("leads {n}", { n: zkLeads.length });
    if (believes.length) leads += t(" · thinks it leads {list}", { list: believes.join(", ") });
    setText(el.querySelector(".leads"), leads);
    setClass(el.querySelector(".leads"), "note", believes.length > 0);
    const iso = el.querySelector(".iso");
    const isoText = isolationText(b, store);
    if (iso.__text !== isoText) {
      iso.__text = isoText;
      iso.replaceChildren(...(isoText ? isoText.split("|").map(chip => h("span.chip.bad", { text: chip })) : []));
    }
    el.__broker = b;
  }

  function isolationText(b, store) {
    const from = b.isolated_from || [];
    if (!from.length) return "";
    const brokers = from.filter(n => typeof n === "number");
    const out = [];
    if (from.includes("zk")) out.push("✂ ZooKeeper");
    const cut = brokers.filter(n => voterSet.has(n));
    const peers = brokers.filter(n => !voterSet.has(n));
    if (cut.length) out.push(cut.length === voterSet.size ? t("✂ controllers") : t("✂ controller {ids}", { ids: cut.join(",") }));
    if (peers.length) out.push(t("✂ brokers {ids}", { ids: peers.join(",") }));
    const clients = from.filter(n => typeof n === "string" && n !== "zk");
    if (clients.length) out.push(clients.length > 2 ? t("✂ {n} clients", { n: clients.length }) : "✂ " + clients.join(","));
    return out.join("|");
  }

  /** ZooKeeper session line with the countdown while heartbeats do not arrive. */
  function updateSession(el, b, store, tNow) {
    const zk = b.zk || {};
    const timeout = store.meta ? store.meta.config["zookeeper.session.timeout.ms"] : 0;
    const line = el.querySelector(".zk");
    const text = line.querySelector(".zktext");
    const ttl = el.querySelector(".ttl");
    const left = sessionLeft(zk, tNow, timeout);
    line.className = "zk " + (zk.client_state || "none");
    if (!left) {
      setText(text, zk.client_state === "none" || !zk.client_state ? t("no ZooKeeper session") : zkState(zk.client_state));
      ttl.hidden = true;
      return;
    }
    // a broker process that is down holds no client, but ZooKeeper keeps its session (and the
    // ephemeral /brokers/ids/<id>) until the session expires: say so, with the countdown
    const orphaned = (zk.client_state === "none" || !zk.client_state) && store.znodes.has(`/brokers/ids/${b.id}`);
    const silentFor = zk.last_heard_by_zk_ms === null ? 0 : tNow - zk.last_heard_by_zk_ms;
    const cutOff = orphaned || silentFor > timeout / 3 + 250;
    ttl.hidden = false;
    setStyle(ttl.firstChild, "width", (left.fraction * 100).toFixed(1) + "%");
    setClass(ttl, "low", cutOff);
    if (cutOff) {
      if (!text.__cd) { text.replaceChildren(h("span.countdown")); text.__cd = true; text.__text = null; }
      setText(text.firstChild, orphaned ? t("ZK session {id} still alive · expires in {t}", { id: hex(zk.session_id), t: shortSeconds(left.ms) })
        : t("session expires in {t}", { t: shortSeconds(left.ms) }));
    } else {
      if (text.__cd) { text.__cd = false; text.replaceChildren(); text.__text = null; }
      setText(text, `${zkState(zk.client_state)} · ${hex(zk.session_id)}`);
    }
  }

  /** Zones: a slot as tall as the tallest card (in steps of 8 px, so a line more or less does
   *  not move the map every frame); a change lays the map out again on the next render. */
  function fitCards() {
    let tallest = 0;
    for (const el of brokerLayer.children) tallest = Math.max(tallest, el.offsetHeight);
    const want = Math.max(MAP.brokerH, Math.ceil((tallest + 4) / 8) * 8);
    if (want !== cardH && tallest > 0) { cardH = want; layoutKey = ""; app.requestRender(true); }
  }

  function createClient(c) {
    return h("div.node.client", { onclick: () => app.showTab("clients") }, h("span.kind"), h("span.cname"));
  }

  function updateClient(el, c, store) {
    const box = layout.nodes["c:" + c.name];
    el.style.left = box.x + "px"; el.style.top = box.y + "px";
    el.className = "node client " + c.type + (c.running ? "" : " stopped");
    setText(el.querySelector(".kind"), c.type === "producer" ? "▲" : "▼");
    el.title = c.type === "producer" ? t("producer {name} → {topic}", { name: c.name, topic: c.topic })
      : [t("consumer {name} ← {topic}", { name: c.name, topic: c.topic }), ...readsLines(c)].join("\n");
    // a consumer reading from followers (KIP-392) names them: "← b1"
    const followers = c.reads ? [...new Set(Object.values(c.reads).filter(r => r.role === "follower").map(r => "b" + r.broker))] : [];
    const extra = c.type === "producer" ? ` acks=${c.acks}${c.rate_per_s ? " " + c.rate_per_s + "/s" : ""}`
      : t(" read {n}", { n: c.read }) + (followers.length ? ` ← ${followers.join(",")}` : "");
    el.dataset.reads = readsLines(c).join("; ");
    setText(el.querySelector(".cname"), c.name + extra);
  }

  function render(store, changes) {
    if (!store.meta) return;
    fillLegend(isKraft(store));
    const relayout = ensureLayout(store);
    if (relayout) for (const m of store.messages) m.path = null;
    const brokers = sortedBrokers(store);
    // a card is built for one mode: a switch between ZooKeeper and KRaft eras builds new ones
    const mode = store.quorum ? "k" : "z";
    reconcile(brokerLayer, brokers, b => mode + b.id, createBroker, (el, b) => updateBroker(el, b, store, relayout));
    voters.render(store, layout);
    zoneLayer.render(store, layout);
    if (layout.zones.length && relayout) fitCards();
    const clients = Array.from(store.clients.entries()).map(([name, c]) => ({ name, ...c }));
    reconcile(clientLayer, clients, c => c.name, createClient, (el, c) => updateClient(el, c, store));
    const zb = layout.nodes.zk;
    zkEl.hidden = !zb;
    const line = document.getElementById("controller-line");
    if (!zb) {
      const q = store.quorum;
      setText(line, q.active === null || q.active === undefined ? t("no active controller · Raft epoch {epoch}", { epoch: q.raft_epoch })
        : t("active controller: {id} · Raft epoch {epoch} · metadata HW {hw}", { id: q.active, epoch: q.raft_epoch, hw: q.high_watermark }));
      return;
    }
    zkEl.style.left = zb.x + "px"; zkEl.style.top = zb.y + "px";
    const eph = Array.from(store.znodes.values()).filter(n => n.ephemeral_owner).length;
    setText(zkEl.querySelector(".sub"), t("{n} znodes · {eph} ephemeral", { n: store.znodes.size, eph }));
    const c = store.controller || {};
    setText(line, c.broker === null || c.broker === undefined ? t("no controller") : t("controller: broker {id} · controller epoch {epoch}", { id: c.broker, epoch: c.epoch }));
  }

  /** Every animation frame: session countdowns and the canvas (links, messages). */
  function animate(store, now) {
    if (!layout) return;
    const tNow = simNow(store.clock, store.clockAt, now);
    for (const el of brokerLayer.children) {
      if (!el.__broker) continue;
      if (store.quorum) updateFencingDeadline(el, el.__broker, store, tNow);
      else updateSession(el, el.__broker, store, tNow);
    }
    drawCanvas(store, now);
  }

  function boxOf(n) { return layout.nodes[nodeKey(n)]; }

  function drawCanvas(store, now) {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, layout.height);
    // the ZooKeeper session links, or (KRaft) each broker's registration with the active controller
    ctx.lineWidth = 1;
    ctx.strokeStyle = store.quorum ? "rgba(217, 140, 255, 0.18)" : "rgba(255, 181, 71, 0.16)";
    const hub = layout.nodes.zk || (store.quorum && boxOf(store.quorum.active));
    for (const b of hub ? store.brokers.values() : []) {
      const bb = boxOf(b.id);
      if (!bb || bb === hub) continue;
      const a = anchor(hub, bb), e = anchor(bb, hub);
      ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(e.x, e.y); ctx.stroke();
    }
    // cut and slow links
    if (store.links) {
      const seen = new Set();
      ctx.setLineDash([5, 4]);
      for (const [s, d] of store.links.blocked) {
        const k = [nodeKey(s), nodeKey(d)].sort().join("~");
        if (seen.has(k)) continue;
        seen.add(k);
        const sb = boxOf(s), db = boxOf(d);
        if (!sb || !db) continue;
        const path = messagePath(sb, db, true);
        ctx.strokeStyle = "rgba(255, 93, 108, 0.75)";
        ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(path.a.x, path.a.y); ctx.quadraticCurveTo(path.c.x, path.c.y, path.b.x, path.b.y); ctx.stroke();
        const m = curvePoint(path.a, path.c, path.b, 0.5);
        ctx.setLineDash([]);
        ctx.beginPath(); ctx.moveTo(m.x - 5, m.y - 5); ctx.lineTo(m.x + 5, m.y + 5); ctx.moveTo(m.x + 5, m.y - 5); ctx.lineTo(m.x - 5, m.y + 5); ctx.stroke();
        ctx.setLineDash([5, 4]);
      }
      for (const [s, d] of store.links.slow) {
        const sb = boxOf(s), db = boxOf(d);
        if (!sb || !db) continue;
        const path = messagePath(sb, db, true);
        ctx.strokeStyle = "rgba(255, 181, 71, 0.8)";
        ctx.beginPath(); ctx.moveTo(path.a.x, path.a.y); ctx.quadraticCurveTo(path.c.x, path.c.y, path.b.x, path.b.y); ctx.stroke();
      }
      ctx.setLineDash([]);
    }
    // messages in flight
    const speed = store.clock ? (store.clock.speed === "max" ? "max" : store.clock.actual_speed || store.clock.speed) : 1;
    const keep = [];
    const alter = [];
    const perPath = new Map();
    for (const m of store.messages) {
      if (m.dur === undefined) m.dur = messageDuration(m.sent, m.deliver, speed);
      const t = progress(m.born, m.dur, now);
      if (t >= 1 && now - m.born > m.dur + 160) continue;
      const pk = m.src + ">" + m.dst + ">" + m.type;
      const n = (perPath.get(pk) || 0) + 1;
      perPath.set(pk, n);
      if (n > 3 && !m.dropped) continue;      // a busy link shows a few dots, not a queue
      keep.push(m);
      const sb = boxOf(m.src), db = boxOf(m.dst);
      if (!sb || !db) continue;
      const forward = nodeKey(m.src) < nodeKey(m.dst);
      const path = m.path || (m.path = messagePath(sb, db, forward));
      const response = m.type.endsWith("Response");
      const quorumHop = voterSet.has(m.src) || voterSet.has(m.dst);
      const color = m.dropped ? DROP_COLOR : messageColor(m.type, quorumHop);
      const tt = m.dropped ? Math.min(t, 0.5) : t;
      const p = curvePoint(path.a, path.c, path.b, tt);
      const fade = t >= 1 ? Math.max(0, 1 - (now - m.born - m.dur) / 160) : (m.dropped && t > 0.5 ? 1 - (t - 0.5) * 2 : 1);
      ctx.globalAlpha = fade;
      ctx.beginPath();
      ctx.arc(p.x, p.y, m.type.startsWith("Zk") ? 2.6 : 3.4, 0, Math.PI * 2);
      if (response) { ctx.strokeStyle = color; ctx.lineWidth = 1.6; ctx.stroke(); }
      else { ctx.fillStyle = color; ctx.fill(); }
      if (messageKind(m.type, quorumHop) === "alterisr" && !m.dropped) {
        const name = messageName(m.type, store.meta);
        alter.push(`${name} ${nodeLabel(m.src)} → ${nodeLabel(m.dst)}${response || voterSet.has(m.dst) ? "" : " (controller)"}`);
        ctx.font = "11px system-ui, sans-serif";
        ctx.fillStyle = color;
        ctx.fillText(name, p.x + 6, p.y - 6);
      }
      if (m.dropped && t > 0.45) {
        ctx.strokeStyle = DROP_COLOR; ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(p.x - 4, p.y - 4); ctx.lineTo(p.x + 4, p.y + 4); ctx.moveTo(p.x + 4, p.y - 4); ctx.lineTo(p.x - 4, p.y + 4); ctx.stroke();
      }
    }
    ctx.globalAlpha = 1;
    store.messages = keep;
    const alterText = alter.length ? "in flight: " + [...new Set(alter)].join(", ") : "";
    if (alterEl.__text !== alterText) {
      alterEl.__text = alterText;
      alterEl.hidden = !alterText;
      alterEl.replaceChildren(...(alterText ? [h("i", { style: { background: messageColor("AlterIsr") } }), alterText] : []));
    }
  }

  return { render, animate, invalidate: () => { layoutKey = ""; } };
}

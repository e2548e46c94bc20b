// The one view of a cluster's state: one renderer per entity (top bar, broker map and network
// messages, partitions and their log strips, timeline, ZooKeeper tree, clients and ledger, faults,
// CLI, alarms) and the requestAnimationFrame loop that redraws what changed. The live page and the
// replay page (and so the compare page, which shows two replay pages side by side) draw through
// it; they differ only in where frames come from (socket frames vs fetched frames) and in their
// own controls, so what a partition card says at a moment cannot drift between them.
import { applyFrame, takeChanges, touched, emptyHighlight } from "./store.js";
import { BY_ID, runAction } from "./actions.js";
import { t } from "./i18n.js";
import { createTopbar } from "./render/topbar.js";
import { createMap } from "./render/map.js";
import { createPartitions } from "./render/partitions.js";
import { createTimeline } from "./render/timeline.js";
import { createZk } from "./render/zk.js";
import { createQuorum } from "./render/quorum.js";
import { isKraft } from "./kraft.js";
import { createClients } from "./render/clients.js";
import { createNetwork } from "./render/network.js";
import { createCli } from "./render/cli.js";
import { createAlarms } from "./render/alarms.js";
import { createGuide } from "./guide.js";
import { closeMenu } from "./ui/menu.js";
import { loadEras } from "./ui/dialogs.js";
import { $$ } from "./dom.js";
import { createSeries, recordFrame } from "./series.js";
import { createMetricsSeries, recordMetrics } from "./metrics.js";
import { createMetrics } from "./render/metrics.js";

/** Draw `app.store` with the shared renderers. The view also gives `app` the methods every page
 *  answers the same way (requestRender, showTab, selectBroker, clearSelection), since the
 *  renderers call them on `app`. Options: `adaptStrips` lowers the log strips' refresh rate when
 *  frames get slow (the live page at high speed); `afterRender(store, changes)` for page extras. */
export function createView(app, { adaptStrips = false, afterRender = null } = {}) {
  const store = app.store;
  store.series = createSeries();          // the live chart's samples, from the frames below
  store.metricSeries = createMetricsSeries();   // Kafka's metrics the frames carry (Metrics tab)
  let forceNext = true;
  const perf = { render: 0, animate: 0, parse: 0, renders: 0, frames: 0, parts: {}, stripEvery: 1 };

  Object.assign(app, {
    requestRender(force) { if (force) forceNext = true; store.dirty = true; },
    showTab(name) {
      store.ui.tab = name;
      for (const b of $$(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
      for (const p of $$(".tab-panel")) p.classList.toggle("active", p.dataset.panel === name);
      renderTab(name, { changed: new Set(), zk: new Map(), flags: { events: true, records: true, meta: true, reset: false, violations: false } }, true);
      if (name === "timeline" && store.ui.selectedEvent !== null) timeline.reveal(store.ui.selectedEvent, store);
    },
    selectBroker(id) {
      store.ui.selectedBroker = store.brokers.has(id) ? id : null;
      app.requestRender(true);
    },
    /** Highlight what a metadata record changed: {partition} or {broker} (render/quorum.js). */
    highlightRecord(target) {
      const hl = emptyHighlight();
      hl.active = true;
      if (target && target.partition) hl.partitions.add(target.partition);
      if (target && target.broker !== undefined) hl.brokers.add(target.broker);
      store.ui.highlight = hl;
      store.ui.selectedBroker = target && target.broker !== undefined && store.brokers.has(target.broker) ? target.broker : null;
      app.requestRender(true);
      if (target && target.partition) requestAnimationFrame(() => partitions.scrollTo(target.partition));
    },
    clearSelection() {
      store.ui.selectedEvent = null;
      store.ui.selectedBroker = null;
      store.ui.highlight = emptyHighlight();
      closeMenu();
      app.requestRender(true);
      timeline.refreshSelection(store);
    },
  });

  const topbar = createTopbar(app);
  const map = createMap(app);
  const partitions = createPartitions(app);
  const timeline = createTimeline(app);
  const tabs = { timeline, zk: coordination(app), clients: createClients(app), network: createNetwork(app), cli: createCli(app),
    metrics: createMetrics(app) };
  const alarms = createAlarms(app);
  const guide = createGuide(app);         // a library story told step by step (issue 33)

  // a tab's panel is drawn only while it shows; forced, it redraws from scratch
  function renderTab(name, changes, force) {
    const r = tabs[name];
    if (r) r.render(store, force ? { ...changes, flags: { ...changes.flags, events: true, records: true, meta: true, reset: true } } : changes, force);
  }

  function timed(name, fn) {
    const t0 = performance.now();
    fn();
    perf.parts[name] = (perf.parts[name] || 0) + performance.now() - t0;
  }

  function renderAll(changes, force) {
    if (force) { changes.flags.meta = true; changes.flags.highlight = true; }
    timed("topbar", () => topbar.render(store, changes));
    tabs.zk.sync(store);
    timed("map", () => map.render(store, changes));
    timed("partitions", () => partitions.render(store, changes, force, perf.stripEvery));
    timed("alarms", () => alarms.render(store, changes));
    timed("guide", () => guide.render(store, changes));
    timed("tab", () => renderTab(store.ui.tab, changes, force && changes.flags.reset));
    if (store.ui.tab !== "timeline") timed("timeline", () => timeline.render(store, changes));   // keep the story flowing
    if (store.ui.tab !== "clients") tabs.clients.renderCount(store);   // a hidden tab's badge still tells the truth
    if (afterRender) afterRender(store, changes);
  }

  // Frame budget: when frames take longer than ~22 ms (a big cluster on a big screen), the log
  // strips are redrawn every 2nd-4th update instead of every one; the rest stays at full rate.
  let frameEwma = 16.7, lastFrameAt = 0;
  const SETTLE_MS = 250;
  let lastRenderAt = 0, settled = true;
  function adapt(now) {
    if (lastFrameAt) frameEwma = 0.9 * frameEwma + 0.1 * Math.min(200, now - lastFrameAt);
    lastFrameAt = now;
    if (frameEwma > 22 && perf.stripEvery < 4) { perf.stripEvery += 1; frameEwma = 18; }
    else if (frameEwma < 17.5 && perf.stripEvery > 1) { perf.stripEvery -= 1; frameEwma = 17; }
  }

  function loop(now) {
    if (adaptStrips) adapt(now);
    const t0 = performance.now();
    if (store.dirty || forceNext) {
      const changes = takeChanges(store);
      const force = forceNext;
      forceNext = false;
      try { renderAll(changes, force); } catch (e) { console.error(e); }
      perf.renders += 1;
      lastRenderAt = now; settled = false;
    } else if (!settled && now - lastRenderAt > SETTLE_MS) {
      // Frames stopped (a pause, the end of a run at max speed): under the frame budget the last
      // ones may have been drawn only in part, so the state that stays on screen is drawn once
      // more, in full, from the store.
      settled = true;
      const every = perf.stripEvery;
      perf.stripEvery = 1;
      try { renderAll({ changed: new Set(), zk: new Map(), flags: { events: false, violations: false, meta: false, clock: true, records: false, reset: false } }, false); }
      catch (e) { console.error(e); }
      perf.stripEvery = every;
    }
    const t1 = performance.now();
    try { map.animate(store, now); } catch (e) { console.error(e); }   // messages in flight, countdowns
    perf.render += t1 - t0;
    perf.animate += performance.now() - t1;
    perf.frames += 1;
    requestAnimationFrame(loop);
  }

  return {
    store, perf, partitions, timeline, cli: tabs.cli,

    /** Apply one frame from the transport; a full frame redraws everything. "gap" when it does not
     *  follow what the store holds (the transport then asks for a full one). */
    apply(frame) {
      const result = applyFrame(store, frame, performance.now());
      if (result === "ok") { recordFrame(store.series, frame, frame.clock.t_ms); recordMetrics(store.metricSeries, frame); }
      if (frame.full) forceNext = true;
      return result;
    },

    /** Highlight what an event touched and select it in the timeline. */
    selectEvent(e, reveal) {
      store.ui.selectedEvent = e.i;
      store.ui.highlight = touched(e);
      const first = store.ui.highlight.partitions.values().next().value;
      app.requestRender(true);
      if (first) requestAnimationFrame(() => partitions.scrollTo(first));
      if (reveal) timeline.reveal(e.i, store);
    },

    /** Highlight one partition (a link's focus, a divergence, a menu's partition). */
    highlightPartition(key, scroll = false) {
      const hl = emptyHighlight();
      hl.active = true;
      if (key) hl.partitions.add(key);
      store.ui.highlight = hl;
      app.requestRender(true);
      if (scroll && key) requestAnimationFrame(() => partitions.scrollTo(key));
      return hl;
    },

    /** Tabs, the buttons outside the toolbar that name an action, the era list; then draw. */
    start() {
      for (const b of $$(".tabs button")) b.addEventListener("click", () => app.showTab(b.dataset.tab));
      for (const el of $$("[data-action]")) {
        if (el.closest("#toolbar")) continue;
        el.addEventListener("click", () => { const a = BY_ID[el.dataset.action]; if (a) runAction(a, { app, store }); });
      }
      requestAnimationFrame(loop);
      return loadEras().then(eras => { topbar.setVersions(eras.versions, eras.notes); app.requestRender(true); return eras; });
    },
  };
}

/** The "zk" tab: the znode tree in ZooKeeper eras, the controller quorum and its metadata log in
 *  KRaft eras; the tab is named after what it shows. */
function coordination(app) {
  const zk = createZk(app), quorum = createQuorum(app);
  document.getElementById("panel-zk").append(quorum.root);
  const tab = document.querySelector(".tabs button[data-tab=zk]");
  let mode = null, fresh = false;
  /** Name the tab after the era's mode (the panel redraws in full at its next render). */
  function sync(store) {
    const kraft = isKraft(store);
    if (mode === kraft) return;
    mode = kraft;
    fresh = true;
    zk.show(!kraft); quorum.show(kraft);
    if (!tab) return;
    tab.textContent = kraft ? t("Quorum") : "ZooKeeper";
    tab.title = kraft ? t("The controller quorum (Raft) and its metadata log") : t("The znode tree");
  }
  return {
    sync,
    render(store, changes, force) {
      sync(store);
      if (fresh) { force = true; fresh = false; }
      (mode ? quorum : zk).render(store, changes, force);
    },
  };
}

/** Whether a key press is for the page's shortcuts: not typed into a field (a range slider
 *  counts as a field unless `rangeIsField` is false), not under a modifier, no dialog open. */
export function pageKey(e, { rangeIsField = true } = {}) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return false;
  const t = e.target;
  if (t && ((t.tagName === "INPUT" && (rangeIsField || t.type !== "range")) || t.tagName === "TEXTAREA"
    || t.tagName === "SELECT" || t.isContentEditable)) return false;
  return !document.querySelector("dialog[open]");
}

// The znode tree: data, version, ephemeral owner; writes flash, new nodes glow, deleted ones fade.
import { h, reconcile, setText, setClass, clear } from "../dom.js";
import { hex } from "../format.js";
import { zkGet } from "../kafka.js";
import { t } from "../i18n.js";

const GONE_MS = 1000;

export function createZk(app) {
  const panel = document.getElementById("panel-zk");
  const head = h("div.dim.small", { text: t("Click a znode for its data and stat. Changes flash (amber = written, green = created, red = deleted).") });
  const tree = h("div.zk-tree");
  const detail = h("div.zk-detail");
  const root = h("div.zk-root", null, head, tree, detail);
  panel.append(root);
  const ghosts = new Map();   // path -> {node, until}
  let selected = null;
  let drawnSelected = null;   // the znode whose detail is on screen: a click while paused must redraw

  function create(item) {
    return h("div.zrow", { dataset: { path: item.path }, onclick: () => { selected = item.path; app.requestRender(true); } },
      h("span.zname"), h("span.zver"), h("span.eph"), h("span.zdata"));
  }

  function update(el, item, store, flashes, now) {
    const depth = item.path === "/" ? 0 : item.path.split("/").length - 2;
    el.style.paddingLeft = (4 + depth * 14) + "px";
    setText(el.querySelector(".zname"), item.path.slice(item.path.lastIndexOf("/")) || "/");
    const n = item.node;
    setText(el.querySelector(".zver"), `v${n.version}`);
    el.querySelector(".zver").title = t("dataVersion {v}: each write adds one (the controller's conditional writes compare it)", { v: n.version });
    // the owner is the session id ZooKeeper's stat calls ephemeralOwner
    const eph = el.querySelector(".eph");
    setText(eph, n.ephemeral_owner ? t("ephemeral {session}", { session: hex(n.ephemeral_owner) }) : "");
    eph.title = n.ephemeral_owner ? t("an ephemeral znode: it lives as long as ZooKeeper session {session}", { session: hex(n.ephemeral_owner) }) : "";
    const data = n.data === null || n.data === undefined ? "" : JSON.stringify(n.data);
    setText(el.querySelector(".zdata"), data.length > 90 ? data.slice(0, 90) + "…" : data);
    setClass(el, "selected", selected === item.path);
    setClass(el, "hl", store.ui.highlight.paths.has(item.path));
    const flash = flashes.get(item.path);
    if (flash === "changed" || flash === "born") {
      el.classList.remove("flash", "born");
      void el.offsetWidth;   // restart the animation
      el.classList.add(flash === "born" ? "born" : "flash");
    }
    setClass(el, "gone", Boolean(item.gone));
  }

  function render(store, changes, force) {
    const now = performance.now();
    for (const [path, kind] of changes.zk) {
      if (kind === "gone" && !store.znodes.has(path)) ghosts.set(path, { until: now + GONE_MS, node: lastSeen.get(path) });
    }
    const anyGhost = ghosts.size > 0;
    if (!changes.zk.size && !force && !anyGhost && !changes.flags.reset && drawnSelected === selected) return;
    drawnSelected = selected;
    const items = [];
    for (const [path, node] of store.znodes) { items.push({ path, node }); lastSeen.set(path, node); }
    for (const [path, g] of ghosts) {
      if (g.until < now || store.znodes.has(path) || !g.node) ghosts.delete(path);
      else items.push({ path, node: g.node, gone: true });
    }
    items.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    reconcile(tree, items, it => it.path, create, (el, it) => update(el, it, store, changes.zk, now));
    renderDetail(store);
    if (ghosts.size) app.requestRender();
  }
  const lastSeen = new Map();

  function renderDetail(store) {
    clear(detail);
    if (!selected) return;
    const res = zkGet(store.znodes, selected);
    detail.append(h("div.small.dim", { text: `get ${selected}` }));
    if (res.error) { detail.append(h("pre.block.err-text", { text: res.error })); return; }
    const node = store.znodes.get(selected);
    const pretty = node.data === null || node.data === undefined ? "null" : JSON.stringify(node.data, null, 2);
    detail.append(h("pre.block", { text: pretty }), h("pre.block", { text: res.lines.slice(1).join("\n") }));
  }

  function select(path) { selected = path; }

  return { render, select, show(on) { root.hidden = !on; } };
}

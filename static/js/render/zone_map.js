// Zones on the cluster map (a run with racks, docs/model.md §21): a labelled box per rack around
// its brokers (and, in KRaft eras, its dedicated controllers), with the zone's state and one
// button that fails it — or, once it is down, restarts it; the zone's menu (its name, or the ▾)
// also isolates it and heals its links. Each is one command with "rack", sent through the same
// path as the broker menu's (app.zoneAction / app.zoneMenu, actions.js group "zone").
import { h, reconcile, setText, setClass } from "../dom.js";
import { zoneOf, zoneState } from "../zones.js";
import { t } from "../i18n.js";

/** What the zone's own button does in its state: fail it, bring it back, or heal its links. */
function primary(state) {
  if (state.down === state.size) return ["zone-restart", t("restart zone"), t("restart"), t("start every stopped broker (and controller) of this zone: one command")];
  if (state.cut && !state.down) return ["zone-heal", t("heal zone"), t("heal"), t("restore every link with an end in this zone: one command")];
  return ["zone-crash", t("fail zone"), t("fail"), t("crash every broker (and controller) of this zone at the same millisecond: one command")];
}

export function createZoneLayer(app, nodesEl) {
  const layer = h("div.zones");
  nodesEl.prepend(layer);          // under the broker cards and the voters

  function create() {
    const el = h("div.zone", { oncontextmenu: e => {
      if (el.dataset.rack === undefined) return;
      e.preventDefault();
      app.zoneMenu(el.dataset.rack, { x: e.clientX, y: e.clientY });
    } });
    const name = h("button.zname", { type: "button", onclick: e => app.zoneMenu(el.dataset.rack, e.currentTarget) });
    const act = h("button.small.zact", { type: "button", onclick: () => app.zoneAction(el.dataset.rack, el.__primary) });
    const more = h("button.small.zmore", { type: "button", text: "▾", title: t("zone actions: fail, isolate, restart, heal"),
      "aria-label": t("zone actions"), onclick: e => app.zoneMenu(el.dataset.rack, e.currentTarget) });
    el.append(h("div.zhead", null, name, h("span.zstate"), act, more));
    return el;
  }

  function update(el, box, store) {
    el.style.left = box.x + "px"; el.style.top = box.y + "px";
    el.style.width = box.w + "px"; el.style.height = box.h + "px";
    const head = el.firstChild;
    const [name, stateEl, act, more] = head.children;
    if (box.rack === null) {          // the nodes without broker.rack: no zone to act on
      delete el.dataset.rack;
      el.className = "zone norack";
      setText(name, t("no rack"));
      name.disabled = true;
      name.title = t("brokers without broker.rack (Kafka's rack = null)");
      act.hidden = more.hidden = true;
      setText(stateEl, "");
      return;
    }
    el.dataset.rack = box.rack;
    name.disabled = false;
    act.hidden = more.hidden = false;
    const zone = zoneOf(store, box.rack);
    const state = zoneState(zone, store.links, zone.others);
    const ids = [...zone.brokers.map(b => t("broker {id}", { id: b.id })), ...zone.voters.map(v => t("controller {id}", { id: v.id }))];
    setText(name, t("zone {rack}", { rack: box.rack }));
    setText(stateEl, state.text);
    const [id, label, short, title] = primary(state);
    el.__primary = id;
    // a narrow box (three zones at 1024 px) says the verb alone: "restart zone" beside the name
    // cut "zone az-b" to "zone az-"; the title still names the zone
    setText(act, box.w < 250 ? short : label);
    act.title = title;
    // a narrow box keeps its name and buttons; its state is in the name's colour and its title
    el.className = "zone" + (state.down === state.size ? " down" : state.down || state.paused ? " partial" : "")
      + (state.cut ? " cut" : "") + (box.w < 250 ? " narrow" : "");
    name.title = t("zone {rack}: {state} · {nodes} (broker.rack={rack}) · click: zone actions",
      { rack: box.rack, state: state.text, nodes: ids.join(", ") });
    setClass(stateEl, "bad", state.down > 0 || state.cut > 0);
  }

  /** Draw the boxes of `layout.zones` (none in a run without racks). */
  function render(store, layout) {
    reconcile(layer, layout.zones || [], z => String(z.rack), create, (el, z) => update(el, z, store));
  }

  return { render };
}

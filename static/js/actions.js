// Every user action, once. The toolbar, the broker, controller, zone and partition menus, the keyboard
// shortcuts and the help page are all built from this table. An action with `mode` exists only in
// ZooKeeper ("zk") or KRaft ("kraft") eras: there is no session to expire in KRaft, and no
// controller voter in ZooKeeper mode.

import { cutLinks } from "./zones.js";
import { t } from "./i18n.js";

const RUNNABLE = ["running", "starting", "shutting_down", "paused"];
const STOPPED = ["stopped", "halted", "registration_failed"];

/** "its 2 brokers" / "broker 2" / "its 2 brokers and controller 3001": the zone's nodes in `states`. */
function zoneNodes(z, states) {
  const brokers = z.brokers.filter(b => states.includes(b.state)).map(b => b.id);
  const voters = z.voters.filter(v => (states === STOPPED ? v.state === "stopped" : v.state !== "stopped")).map(v => v.id);
  const parts = [
    brokers.length === 1 ? t("broker {id}", { id: brokers[0] }) : brokers.length ? t("its {n} brokers", { n: brokers.length }) : "",
    voters.length === 1 ? t("controller {id}", { id: voters[0] }) : voters.length ? t("its {n} controllers", { n: voters.length }) : "",
  ].filter(Boolean);
  return parts.join(t(" and ")) || t("nothing");
}

function broker(ctx) { return ctx.broker || (ctx.store.ui.selectedBroker !== null ? ctx.store.brokers.get(ctx.store.ui.selectedBroker) : null); }
function playing(s) { return Boolean(s.clock && s.clock.playing); }
function live(s) { return Boolean(s.clock && !s.clock.finished); }

export const ACTIONS = [
  // -- running the simulation
  { id: "play", group: "run", toolbar: true, keys: [" "], keyLabel: "Space",
    label: s => playing(s) ? t("Pause") : t("Play"), icon: s => playing(s) ? "pause" : "play",
    enabled: s => playing(s) || live(s),
    run: ({ app, store }) => app.control(playing(store) ? "pause" : "play") },
  { id: "step", group: "run", toolbar: true, keys: ["n", "."], icon: "step", label: t("Step to the next event"),
    enabled: live, run: ({ app }) => app.control("step") },
  { id: "restart", group: "run", toolbar: true, keys: ["r"], icon: "restart", label: t("Restart the scenario"),
    enabled: s => Boolean(s.clock), run: ({ app }) => app.control("restart") },
  { id: "replay", group: "run", toolbar: true, keys: ["R"], icon: "replay", label: t("Replay this session (your commands become the timeline)"),
    enabled: s => Boolean(s.clock && s.clock.commands), run: ({ app }) => app.control("replay") },
  { id: "slower", group: "speed", keys: ["-", "["], label: t("Slower"), run: ({ app }) => app.nudgeSpeed(-1) },
  { id: "faster", group: "speed", keys: ["+", "=", "]"], label: t("Faster"), run: ({ app }) => app.nudgeSpeed(1) },
  { id: "realtime", group: "speed", keys: ["u"], label: t("Real time (1×)"), run: ({ app }) => app.setSpeed(1) },
  { id: "max", group: "speed", keys: ["m"], label: t("As fast as possible"), run: ({ app }) => app.setSpeed("max") },

  // -- one broker (the selected one, or the one whose menu is open)
  { id: "crash", group: "broker", keys: ["k"], label: t("Crash the process (kill -9)"),
    enabled: (s, b) => b && RUNNABLE.includes(b.state), command: b => ({ op: "crash", broker: b.id, mode: "process" }) },
  { id: "power", group: "broker", keys: ["K"], label: t("Power failure (unflushed data lost)"),
    enabled: (s, b) => b && RUNNABLE.includes(b.state), command: b => ({ op: "crash", broker: b.id, mode: "power" }) },
  { id: "start", group: "broker", keys: ["s"], label: t("Start / restart"),
    enabled: (s, b) => b && ["stopped", "halted", "registration_failed"].includes(b.state), command: b => ({ op: "restart", broker: b.id }) },
  { id: "shutdown", group: "broker", keys: ["d"], label: t("Controlled shutdown"),
    enabled: (s, b) => b && b.state === "running", command: b => ({ op: "shutdown", broker: b.id }) },
  { id: "pause", group: "broker", keys: ["g"], label: b => b && b.state === "paused" ? t("Resume after the pause") : t("Pause (long GC stall)"),
    enabled: (s, b) => b && ["running", "starting", "shutting_down", "paused"].includes(b.state),
    command: b => ({ op: b.state === "paused" ? "resume" : "pause", broker: b.id }) },
  { id: "isolate-zk", group: "broker", mode: "zk", keys: ["z"], label: t("Isolate from ZooKeeper"), enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "zk" }) },
  { id: "isolate-controllers", group: "broker", mode: "kraft", keys: ["z"], label: t("Isolate from the controllers (not from clients or brokers)"),
    enabled: (s, b) => Boolean(b), command: b => ({ op: "isolate", broker: b.id, from: "controllers" }) },
  { id: "isolate-brokers", group: "broker", keys: ["i"], label: t("Isolate from the other brokers"), enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "brokers" }) },
  { id: "isolate-clients", group: "broker", keys: [], label: t("Isolate from clients"), enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "clients" }) },
  { id: "isolate-all", group: "broker", keys: ["I"], label: t("Isolate from everything"), enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "all" }) },
  { id: "heal-broker", group: "broker", keys: ["l"], label: t("Heal this broker's links"),
    enabled: (s, b) => Boolean(b && b.isolated_from && b.isolated_from.length),
    command: b => b.isolated_from.map(n => ({ op: "heal", from: b.id, to: n })) },
  { id: "expire", group: "broker", mode: "zk", keys: ["x"], label: t("Expire its ZooKeeper session"),
    enabled: (s, b) => Boolean(b && b.zk && b.zk.session_id !== null), command: b => ({ op: "expire_session", broker: b.id }) },
  { id: "flush", group: "broker", keys: ["f"], label: t("Flush (fsync) its logs"),
    enabled: (s, b) => b && ["running", "shutting_down", "paused"].includes(b.state), command: b => ({ op: "flush", broker: b.id }) },

  // -- one controller voter (KRaft eras; docs/scenario-format.md §4.2: "controller" in place of "broker")
  { id: "controller-crash", group: "controller", mode: "kraft", keys: [], label: t("Crash this controller (kill -9)"),
    enabled: (s, v) => v && v.state !== "stopped", command: v => ({ op: "crash", controller: v.id }) },
  { id: "controller-shutdown", group: "controller", mode: "kraft", keys: [], label: t("Shut it down (clean: a leader resigns)"),
    enabled: (s, v) => v && v.state === "running", command: v => ({ op: "shutdown", controller: v.id }) },
  { id: "controller-pause", group: "controller", mode: "kraft", keys: [], label: v => v && v.state === "paused" ? t("Resume after the pause") : t("Pause (long GC stall)"),
    enabled: (s, v) => v && v.state !== "stopped", command: v => ({ op: v.state === "paused" ? "resume" : "pause", controller: v.id }) },
  { id: "controller-isolate", group: "controller", mode: "kraft", keys: [], label: t("Isolate from everything"),
    enabled: (s, v) => Boolean(v), command: v => ({ op: "isolate", controller: v.id, from: "all" }) },
  { id: "controller-heal", group: "controller", mode: "kraft", keys: [], label: t("Heal this controller's links"),
    enabled: (s, v) => Boolean(v && cutPeers(s, v.id).length), command: (v, s) => cutPeers(s, v.id).map(n => ({ op: "heal", from: v.id, to: n })) },
  { id: "controller-restart", group: "controller", mode: "kraft", keys: [], label: t("Start / restart"),
    enabled: (s, v) => v && v.state === "stopped", command: v => ({ op: "restart", controller: v.id }) },

  // -- one zone (a run with racks; docs/scenario-format.md §4.3: one command with "rack" acts on
  // every broker of it, and in KRaft eras on its dedicated controllers too)
  { id: "zone-crash", group: "zone", keys: [], label: z => t("Fail zone {rack}: crash {nodes}", { rack: z.rack, nodes: zoneNodes(z, RUNNABLE) }),
    enabled: (s, z) => Boolean(z && (z.brokers.some(b => RUNNABLE.includes(b.state)) || z.voters.some(v => v.state !== "stopped"))),
    command: z => ({ op: "crash", rack: z.rack, mode: "process" }) },
  { id: "zone-isolate", group: "zone", keys: [], label: z => t("Isolate zone {rack} (cut its links to every node outside it)", { rack: z.rack }),
    enabled: (s, z) => Boolean(z && (z.brokers.length || z.voters.length)), command: z => ({ op: "isolate", rack: z.rack, from: "all" }) },
  { id: "zone-restart", group: "zone", keys: [], label: z => t("Restart zone {rack}: start {nodes}", { rack: z.rack, nodes: zoneNodes(z, STOPPED) }),
    enabled: (s, z) => Boolean(z && (z.brokers.some(b => STOPPED.includes(b.state)) || z.voters.some(v => v.state === "stopped"))),
    command: z => ({ op: "restart", rack: z.rack }) },
  { id: "zone-heal", group: "zone", keys: [], label: z => t("Heal zone {rack}'s links", { rack: z.rack }),
    enabled: (s, z) => Boolean(z && [...z.brokers, ...z.voters].some(n => cutLinks(n.id, s.links).length)),
    command: z => ({ op: "heal", rack: z.rack }) },

  // -- the cluster
  { id: "heal-all", group: "cluster", keys: ["h"], label: t("Heal every link"), enabled: s => Boolean(s.links && (s.links.blocked.length || s.links.slow.length)),
    command: () => ({ op: "heal" }) },
  { id: "preferred", group: "cluster", keys: ["e"], label: t("Preferred replica election (all partitions)"), enabled: live,
    command: () => ({ op: "elect_preferred" }) },
  { id: "produce10", group: "cluster", keys: ["p"], label: t("Produce 10 records (acks=all, console producer)"),
    enabled: s => live(s) && Boolean(s.meta && s.meta.topics.length),
    command: (b, s) => ({ op: "produce", topic: s.meta.topics[0].name, count: 10, acks: "all", producer: "console" }) },

  // -- the page
  { id: "open-picker", group: "view", keys: ["o"], label: t("Scenarios and new cluster…"), run: ({ app }) => app.openPicker() },
  { id: "config", group: "view", keys: ["c"], label: t("Config editor…"), run: ({ app }) => app.openConfig() },
  { id: "violation", group: "view", keys: ["v"], label: t("Jump to the latest violation"), enabled: s => s.violations.length > 0,
    run: ({ app }) => app.jumpToViolation() },
  { id: "clear", group: "view", keys: ["Escape"], keyLabel: "Esc", label: t("Clear selection and highlight"), run: ({ app }) => app.clearSelection() },
  { id: "share", group: "view", keys: [], label: t("Copy a link to this room"), run: ({ app }) => app.share() },
  { id: "help", group: "view", keys: ["?"], label: t("Help and shortcuts"), run: ({ app }) => app.openHelp() },
];

export const BY_ID = Object.fromEntries(ACTIONS.map(a => [a.id, a]));

/** Nodes a controller has a cut link with (either way), from the frame's links. */
function cutPeers(s, id) {
  const out = new Set();
  for (const [a, b] of (s.links && s.links.blocked) || []) { if (a === id) out.add(b); if (b === id) out.add(a); }
  return [...out];
}

/** Whether the action exists in the era of the run shown (see `mode` above). */
export function inMode(action, store) {
  if (!action.mode) return true;
  return (action.mode === "kraft") === Boolean(store && store.quorum);
}

/** A controller voter of the quorum, by id (null in ZooKeeper mode). */
export function voterOf(store, id) {
  return store.quorum ? store.quorum.voters.find(v => v.id === id) || null : null;
}

export function labelOf(action, store, b) {
  const own = action.group === "broker" || action.group === "controller" || action.group === "zone";
  return typeof action.label === "function" ? action.label(own ? b : store, b) : action.label;
}

export function isEnabled(action, store, b) {
  return action.enabled ? Boolean(action.enabled(store, b)) : true;
}

/** Run an action; broker actions act on ctx.broker or the selected broker, controller actions on
 *  ctx.voter. */
export function runAction(action, ctx) {
  if (!inMode(action, ctx.store)) return;
  if (action.group === "zone") {
    const z = ctx.zone;
    if (!z || !isEnabled(action, ctx.store, z)) return;
    ctx.app.command(action.command(z, ctx.store), labelOf(action, ctx.store, z));
    return;
  }
  if (action.group === "controller") {
    const v = ctx.voter;
    if (!v || !isEnabled(action, ctx.store, v)) return;
    ctx.app.command(action.command(v, ctx.store), t("{label} (controller {id})", { label: labelOf(action, ctx.store, v), id: v.id }));
    return;
  }
  const b = broker(ctx);
  if (action.group === "broker" && !b) {
    ctx.app.toast(t("Select a broker first"), t("click a broker card or press its id (0-9)"));
    return;
  }
  if (!isEnabled(action, ctx.store, b)) return;
  if (action.command) {
    const op = action.command(b, ctx.store);
    ctx.app.command(op, (b ? t("{label} (broker {id})", { label: labelOf(action, ctx.store, b), id: b.id }) : labelOf(action, ctx.store, b)));
  } else {
    action.run(ctx);
  }
}

/** The action bound to a key press in the era shown, or a broker selection for digits. */
export function actionForKey(key, store = null) {
  if (/^[0-9]$/.test(key)) return { select: Number(key) };
  return ACTIONS.find(a => a.keys.includes(key) && inMode(a, store)) || null;
}

export function keyLabel(action) {
  if (action.keyLabel) return action.keyLabel;
  return action.keys.join(" ");
}

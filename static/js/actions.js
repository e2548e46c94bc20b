// Every user action, once. The toolbar, the broker and partition menus, the keyboard shortcuts and
// the help page are all built from this table.

const RUNNABLE = ["running", "starting", "shutting_down", "paused"];

function broker(ctx) { return ctx.broker || (ctx.store.ui.selectedBroker !== null ? ctx.store.brokers.get(ctx.store.ui.selectedBroker) : null); }
function playing(s) { return Boolean(s.clock && s.clock.playing); }
function live(s) { return Boolean(s.clock && !s.clock.finished); }

export const ACTIONS = [
  // -- running the simulation
  { id: "play", group: "run", toolbar: true, keys: [" "], keyLabel: "Space",
    label: s => playing(s) ? "Pause" : "Play", icon: s => playing(s) ? "pause" : "play",
    enabled: s => playing(s) || live(s),
    run: ({ app, store }) => app.control(playing(store) ? "pause" : "play") },
  { id: "step", group: "run", toolbar: true, keys: ["n", "."], icon: "step", label: "Step to the next event",
    enabled: live, run: ({ app }) => app.control("step") },
  { id: "restart", group: "run", toolbar: true, keys: ["r"], icon: "restart", label: "Restart the scenario",
    enabled: s => Boolean(s.clock), run: ({ app }) => app.control("restart") },
  { id: "replay", group: "run", toolbar: true, keys: ["R"], icon: "replay", label: "Replay this session (your commands become the timeline)",
    enabled: s => Boolean(s.clock && s.clock.commands), run: ({ app }) => app.control("replay") },
  { id: "slower", group: "speed", keys: ["-", "["], label: "Slower", run: ({ app }) => app.nudgeSpeed(-1) },
  { id: "faster", group: "speed", keys: ["+", "=", "]"], label: "Faster", run: ({ app }) => app.nudgeSpeed(1) },
  { id: "realtime", group: "speed", keys: ["u"], label: "Real time (1×)", run: ({ app }) => app.setSpeed(1) },
  { id: "max", group: "speed", keys: ["m"], label: "As fast as possible", run: ({ app }) => app.setSpeed("max") },

  // -- one broker (the selected one, or the one whose menu is open)
  { id: "crash", group: "broker", keys: ["k"], label: "Crash the process (kill -9)",
    enabled: (s, b) => b && RUNNABLE.includes(b.state), command: b => ({ op: "crash", broker: b.id, mode: "process" }) },
  { id: "power", group: "broker", keys: ["K"], label: "Power failure (unflushed data lost)",
    enabled: (s, b) => b && RUNNABLE.includes(b.state), command: b => ({ op: "crash", broker: b.id, mode: "power" }) },
  { id: "start", group: "broker", keys: ["s"], label: "Start / restart",
    enabled: (s, b) => b && ["stopped", "halted", "registration_failed"].includes(b.state), command: b => ({ op: "restart", broker: b.id }) },
  { id: "shutdown", group: "broker", keys: ["d"], label: "Controlled shutdown",
    enabled: (s, b) => b && b.state === "running", command: b => ({ op: "shutdown", broker: b.id }) },
  { id: "pause", group: "broker", keys: ["g"], label: b => b && b.state === "paused" ? "Resume after the pause" : "Pause (long GC stall)",
    enabled: (s, b) => b && ["running", "starting", "shutting_down", "paused"].includes(b.state),
    command: b => ({ op: b.state === "paused" ? "resume" : "pause", broker: b.id }) },
  { id: "isolate-zk", group: "broker", keys: ["z"], label: "Isolate from ZooKeeper", enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "zk" }) },
  { id: "isolate-brokers", group: "broker", keys: ["i"], label: "Isolate from the other brokers", enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "brokers" }) },
  { id: "isolate-clients", group: "broker", keys: [], label: "Isolate from clients", enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "clients" }) },
  { id: "isolate-all", group: "broker", keys: ["I"], label: "Isolate from everything", enabled: (s, b) => Boolean(b),
    command: b => ({ op: "isolate", broker: b.id, from: "all" }) },
  { id: "heal-broker", group: "broker", keys: ["l"], label: "Heal this broker's links",
    enabled: (s, b) => Boolean(b && b.isolated_from && b.isolated_from.length),
    command: b => b.isolated_from.map(n => ({ op: "heal", from: b.id, to: n })) },
  { id: "expire", group: "broker", keys: ["x"], label: "Expire its ZooKeeper session",
    enabled: (s, b) => Boolean(b && b.zk && b.zk.session_id !== null), command: b => ({ op: "expire_session", broker: b.id }) },
  { id: "flush", group: "broker", keys: ["f"], label: "Flush (fsync) its logs",
    enabled: (s, b) => b && ["running", "shutting_down", "paused"].includes(b.state), command: b => ({ op: "flush", broker: b.id }) },

  // -- the cluster
  { id: "heal-all", group: "cluster", keys: ["h"], label: "Heal every link", enabled: s => Boolean(s.links && (s.links.blocked.length || s.links.slow.length)),
    command: () => ({ op: "heal" }) },
  { id: "preferred", group: "cluster", keys: ["e"], label: "Preferred replica election (all partitions)", enabled: live,
    command: () => ({ op: "elect_preferred" }) },
  { id: "produce10", group: "cluster", keys: ["p"], label: "Produce 10 records (acks=all, console producer)",
    enabled: s => live(s) && Boolean(s.meta && s.meta.topics.length),
    command: (b, s) => ({ op: "produce", topic: s.meta.topics[0].name, count: 10, acks: "all", producer: "console" }) },

  // -- the page
  { id: "open-picker", group: "view", keys: ["o"], label: "Scenarios and new cluster…", run: ({ app }) => app.openPicker() },
  { id: "config", group: "view", keys: ["c"], label: "Config editor…", run: ({ app }) => app.openConfig() },
  { id: "violation", group: "view", keys: ["v"], label: "Jump to the latest violation", enabled: s => s.violations.length > 0,
    run: ({ app }) => app.jumpToViolation() },
  { id: "clear", group: "view", keys: ["Escape"], keyLabel: "Esc", label: "Clear selection and highlight", run: ({ app }) => app.clearSelection() },
  { id: "share", group: "view", keys: [], label: "Copy a link to this room", run: ({ app }) => app.share() },
  { id: "help", group: "view", keys: ["?"], label: "Help and shortcuts", run: ({ app }) => app.openHelp() },
];

export const BY_ID = Object.fromEntries(ACTIONS.map(a => [a.id, a]));

export function labelOf(action, store, b) {
  return typeof action.label === "function" ? action.label(action.group === "broker" ? b : store, b) : action.label;
}

export function isEnabled(action, store, b) {
  return action.enabled ? Boolean(action.enabled(store, b)) : true;
}

/** Run an action; broker actions act on ctx.broker or the selected broker. */
export function runAction(action, ctx) {
  const b = broker(ctx);
  if (action.group === "broker" && !b) {
    ctx.app.toast("Select a broker first", "click a broker card or press its id (0-9)");
    return;
  }
  if (!isEnabled(action, ctx.store, b)) return;
  if (action.command) {
    const op = action.command(b, ctx.store);
    ctx.app.command(op, labelOf(action, ctx.store, b) + (b ? ` (broker ${b.id})` : ""));
  } else {
    action.run(ctx);
  }
}

/** The action bound to a key press, or a broker selection for digits. */
export function actionForKey(key) {
  if (/^[0-9]$/.test(key)) return { select: Number(key) };
  return ACTIONS.find(a => a.keys.includes(key)) || null;
}

export function keyLabel(action) {
  if (action.keyLabel) return action.keyLabel;
  return action.keys.join(" ");
}

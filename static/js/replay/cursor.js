// The replay's transport: this viewer's cursor on the server. Moving it (seek to t, one event
// forward or back, play = small moves forward) fetches a frame in the live format, which goes
// to the same view the live page's socket frames go to.
import { getJSON } from "../http.js";
import { errorText } from "../format.js";
import { toast } from "../ui/toast.js";
import { t } from "../i18n.js";

/** `R` is the replay's state (the tests and the bar read it); `onMove` runs after each frame. */
export function createCursor(rid, end, view, onMove) {
  const store = view.store;
  const R = { cursor: null, t: 0, end, historyLen: 0, playing: false, speed: 1, busy: false, queued: null, requests: 0, lastMs: 0 };

  /** Move the cursor ({t} | {event} | {step}) and apply the frame that comes back. Requests are
   *  serialised; while one is under way only the latest wish is kept (a scrub sends few). */
  function move(where) {
    if (R.busy) { R.queued = where; return R.pending; }
    R.busy = true;
    R.pending = (async () => {
      let next = where;
      while (next) {
        R.queued = null;
        await fetchFrame(next);
        next = R.queued;
      }
      R.busy = false;
    })();
    return R.pending;
  }

  async function fetchFrame(where) {
    const p = new URLSearchParams();
    if (where.t !== undefined) p.set("t", String(Math.max(0, Math.min(R.end, Math.round(where.t)))));
    if (where.event !== undefined) p.set("event", String(where.event));
    if (where.step) p.set("step", where.step);
    if (R.cursor) p.set("cursor", R.cursor);
    p.set("base", String(store.seq || 0));
    if (R.playing) p.set("playing", "1");
    const started = performance.now();
    const reply = await getJSON(`/api/replay/${rid}/frame?${p}`);
    R.lastMs = performance.now() - started;
    R.requests += 1;
    if (!reply.ok) {
      R.playing = false;
      toast(t("Cannot show that moment"), errorText(reply.error), "error");
      return;
    }
    R.cursor = reply.cursor;
    R.t = reply.t_ms;
    R.historyLen = reply.history_len;
    if (view.apply(reply.frame) === "gap") store.seq = 0;     // ask for a full frame next time
    if (R.t >= R.end && R.playing) R.playing = false;
    onMove();
  }

  // playing: the wall clock since play, times the speed, says which moment to fetch next
  let playClock = null;
  function play() {
    if (R.t >= R.end) return;
    R.playing = true;
    playClock = { wall: performance.now(), sim: R.t };
    onMove();
    tickPlay();
  }
  function pause() { R.playing = false; onMove(); move({ t: R.t }); }
  async function tickPlay() {
    while (R.playing) {
      const now = performance.now();
      const target = playClock.sim + (now - playClock.wall) * R.speed;
      await move({ t: Math.min(R.end, target) });
      if (R.t >= R.end) { R.playing = false; onMove(); break; }
      await new Promise(r => setTimeout(r, 60));
    }
  }
  function setSpeed(value) {
    R.speed = Number(value) || 1;
    if (R.playing) playClock = { wall: performance.now(), sim: R.t };
    onMove();
  }

  return {
    R, move, play, pause, setSpeed,
    seek: t => move({ t }),
    /** Stop playing and go to a moment or an event (a click on the scrubber, a mark, the timeline). */
    jump: where => { R.playing = false; return move(where); },
    stepForward: () => { R.playing = false; return move({ step: "forward" }); },
    stepBack: () => { R.playing = false; return move({ step: "back" }); },
  };
}

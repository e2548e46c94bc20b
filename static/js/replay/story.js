// A replay that explains itself: steps that go from one event the timeline shows to the next
// (not through the high-watermark moves nobody sees), and a narration strip that says, from the
// frame on screen, what went wrong and why.
import { h, setText } from "../dom.js";
import { shortSeconds } from "../format.js";
import { eventLabel, eventWhere, explainAlterPartition } from "../render/timeline.js";
import { isKraft } from "../kraft.js";
import { t } from "../i18n.js";

/** `R.story` is [[history index, t_ms, type]] of the events the timeline shows (no HW moves). */
export function createStory(R, store, cursor, view) {
  const strip = h("div.replay-narration", { id: "replay-narration", role: "status", "aria-live": "polite" });
  let at = null;          // {i, len, t}: the visible event the last step went to

  function current() {
    if (at && at.len === R.historyLen && at.t === R.t) return at.i;
    return R.historyLen - 1;       // after a seek: the last event applied
  }

  /** One visible event forward (dir 1) or back (-1); the event is selected in the timeline. */
  async function step(dir) {
    if (!R.story.length) return dir > 0 ? cursor.stepForward() : cursor.stepBack();
    const ref = current();
    let target = null;
    if (dir < 0) { for (let k = R.story.length - 1; k >= 0; k--) if (R.story[k][0] < ref) { target = R.story[k][0]; break; } }
    else for (const s of R.story) if (s[0] > ref) { target = s[0]; break; }
    if (target === null) return cursor.jump({ t: dir < 0 ? 0 : R.end });
    await cursor.jump({ event: target });
    at = { i: target, len: R.historyLen, t: R.t };
    const e = store.events.find(x => x.i === target);
    if (e) view.selectEvent(e, true);
  }

  /** The moment a replay opened without ?t starts at: its first violation, else the start. */
  function firstViolation() {
    return R.violations.length ? R.violations.reduce((a, b) => (b[0] < a[0] ? b : a)) : null;
  }

  // the truncation or election that made the violation possible: the last one on its partition
  function causeOf(v, key) {
    const before = store.events.filter(e => e.t_ms <= v.t_ms && `${e.topic}-${e.partition}` === key);
    return [...before].reverse().find(e => e.type === "truncation")
      || [...before].reverse().find(e => e.type === "leader_elected" || e.type === "become_leader") || null;
  }

  function recordText(v) {
    const id = (v.records || [])[0];
    if (!id) return "";
    const row = (store.ledger || []).find(x => x[0] === id);
    return row && row[9] !== null ? t("record {id} acked at {t}, ", { id, t: shortSeconds(row[9]) }) : t("record {id}, ", { id });
  }

  /** The narration for the frame on screen (derived from the store on every move). */
  function narrate() {
    const seen = store.violations.filter(v => v.t_ms <= R.t);
    let text;
    if (seen.length) {
      const v = seen[0];
      const key = `${v.topic}-${v.partition}`;
      const cause = causeOf(v, key);
      const why = cause ? t(" — after {event} ({where}) at {t}: {reason}", { event: eventLabel(cause, isKraft(store)), where: eventWhere(cause),
        t: shortSeconds(cause.t_ms), reason: cause.reason || "" }) : "";
      text = recordText(v) + t("{invariant} in {key} at {t}: {detail}", { invariant: v.invariant, key, t: shortSeconds(v.t_ms), detail: v.detail || "" }) + why;
      if (seen.length > 1) text += t(" (+{n} more violation(s) by now)", { n: seen.length - 1 });
    } else {
      const first = firstViolation();
      let last = null;
      for (let k = store.events.length - 1; k >= 0 && !last; k--) if (store.events[k].t_ms <= R.t) last = store.events[k];
      text = last && last.type === "alter_partition" ? `${shortSeconds(last.t_ms)} ${eventLabel(last, isKraft(store))}: ${explainAlterPartition(last, isKraft(store))}`
        : first ? t("No violation yet; the first ({invariant}) comes at {t} — press v to jump there.", { invariant: first[1], t: shortSeconds(first[0]) })
        : t("This run breaks no invariant up to its end ({t}); \"What to watch\" below says what happens — step ▶ walks through it event by event.", { t: shortSeconds(R.end) });
    }
    setText(strip, text);
    strip.dataset.state = seen.length ? "violation" : "calm";
  }

  return { strip, step, firstViolation, narrate };
}

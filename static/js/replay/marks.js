// Marks on a run's time axis: story events (elections, ISR changes, truncations, faults) and
// violations, placed by their moment. The replay bar and the compare page's lanes draw the same.
import { h } from "../dom.js";
import { seconds } from "../format.js";
import { t as tr } from "../i18n.js";

/** Place a mark at moment `t` of a run that lasts `end` ms. */
export function placeMark(el, t, end) {
  el.style.left = (100 * t / Math.max(1, end)).toFixed(3) + "%";
  return el;
}

/** Marks for `story` ([i, t, type] rows) of the given types (the last `limit`) and `violations`
 *  ([t, invariant] rows) up to `end`; `onEvent(i)` / `onViolation(t)` make them clickable. */
export function storyMarks(story, violations, end, { types, limit, onEvent = null, onViolation = null }) {
  const out = story.filter(([, t, type]) => t <= end && types.includes(type)).slice(-limit).map(([i, t, type]) =>
    placeMark(h("span.mark." + type, { title: tr("{type} at {t}", { type, t: seconds(t) }), dataset: { i: String(i) },
      onclick: onEvent ? () => onEvent(i) : null }), t, end));
  for (const [t, inv] of violations) {
    if (t > end) continue;
    out.push(placeMark(h("span.mark.violation", { title: tr("{type} at {t}", { type: inv, t: seconds(t) }), onclick: onViolation ? () => onViolation(t) : null }), t, end));
  }
  return out;
}

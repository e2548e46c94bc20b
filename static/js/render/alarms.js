// Invariant violations as an alarm bar: what broke, when, and a jump to the cause.
import { h, setText } from "../dom.js";
import { seconds } from "../format.js";
import { clearRunToasts } from "../ui/toast.js";
import { t } from "../i18n.js";
import { reason } from "../i18n_reasons.js";

export function createAlarms(app) {
  const bar = document.getElementById("alarms");
  const title = h("div.atitle"), detail = h("div.adetail");
  const pauseBox = h("input", { type: "checkbox", checked: true, onchange: () => app.control("pause_on_violation", pauseBox.checked) });
  bar.append(h("span.icon", { text: "⚠" }), h("div.atext", null, title, detail),
    h("button", { type: "button", text: t("Jump to cause"), id: "jump-cause", onclick: () => app.jumpToViolation() }),
    h("label.small", { title: t("Pause the run when an invariant is violated") }, pauseBox, " " + t("pause on violation")),
    h("button.ghost.small", { type: "button", text: t("dismiss"), onclick: () => { dismissed = app.store.violations.length; show(false); } }));
  let dismissed = 0;

  /** The bar floats over the bottom of the page: while it shows, the main column keeps that much
   *  room below its content and scrolls targets ("Jump to cause") clear of it. */
  function show(visible) {
    if (bar.hidden === !visible) return;
    bar.hidden = !visible;
    keepRoom();
  }
  // The room follows the bar's real height: measured when it first shows, before its words were
  // set, it was one line short and "Jump to cause" left the chart's bottom under the bar.
  function keepRoom() {
    const room = bar.hidden ? 0 : bar.offsetHeight + 20;
    document.documentElement.style.setProperty("--alarm-space", room + "px");
  }
  if (window.ResizeObserver) new ResizeObserver(keepRoom).observe(bar);

  function render(store, changes) {
    if (store.clock && pauseBox.checked !== store.clock.pause_on_violation) pauseBox.checked = store.clock.pause_on_violation;
    // "run paused" follows the clock, so the title is derived on every frame, not only on a new violation
    if (!changes.flags.violations && !changes.flags.reset && !changes.flags.clock) return;
    const v = store.violations;
    if (changes.flags.reset) clearRunToasts();
    if (changes.flags.reset && !v.length) dismissed = 0;
    if (!v.length || v.length <= dismissed) { show(false); return; }
    const last = v[v.length - 1];
    const what = { n: v.length, invariant: last.invariant, partition: `${last.topic}-${last.partition}`, at: seconds(last.t_ms) };
    const words = (v.length === 1 ? t("{n} invariant violation — {invariant} in {partition} at {at}", what) : t("{n} invariant violations — {invariant} in {partition} at {at}", what))
      + (store.clock && store.clock.paused_reason === "violation" ? t(" · run paused") : "");
    setText(title, words);
    const said = reason(last.detail);          // the engine's English, in the page's language
    setText(detail, said);
    detail.title = said;          // clamped to two lines; the whole of it on hover
    show(true);
    keepRoom();
  }
  return { render };
}

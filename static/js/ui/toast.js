import { h } from "../dom.js";

const MAX_SHOWN = 3;

/** A short message in the corner; text only (textContent). A toast with the same title as one
 *  on screen replaces it (a repeated rejection is one toast, not a pile); at most three show. */
export function toast(title, body = "", kind = "info", ms = 4200) {
  const box = document.getElementById("toasts");
  for (const old of box.children) if (old.dataset.title === title) old.remove();
  const el = h("div.toast" + (kind === "error" ? ".error" : ""), { role: kind === "error" ? "alert" : "status", dataset: { title } },
    h("div.ttitle", { text: title }), body ? h("div.tbody", { text: body }) : null);
  el.dataset.born = String(performance.now());
  if (ms > RUN_TOAST_MAX_MS) el.dataset.keep = "1";        // a job's progress outlives runs
  box.appendChild(el);
  while (box.children.length > MAX_SHOWN) box.firstChild.remove();
  setTimeout(() => el.remove(), kind === "error" ? ms * 1.6 : ms);
  return el;
}

const RUN_TOAST_MAX_MS = 60 * 1000;

/** A new run starts: what the previous run's toasts said is no longer true of the page. Toasts
 *  of the last moment (the "Loaded" that started this run) and of background jobs stay. */
export function clearRunToasts(graceMs = 1500) {
  const now = performance.now();
  for (const el of [...document.getElementById("toasts").children])
    if (!el.dataset.keep && now - Number(el.dataset.born || 0) > graceMs) el.remove();
}

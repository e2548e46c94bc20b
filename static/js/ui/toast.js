import { h } from "../dom.js";

const MAX_SHOWN = 3;

/** A short message in the corner; text only (textContent). A toast with the same title as one
 *  on screen replaces it (a repeated rejection is one toast, not a pile); at most three show. */
export function toast(title, body = "", kind = "info", ms = 4200) {
  const box = document.getElementById("toasts");
  for (const old of box.children) if (old.dataset.title === title) old.remove();
  const el = h("div.toast" + (kind === "error" ? ".error" : ""), { role: kind === "error" ? "alert" : "status", dataset: { title } },
    h("div.ttitle", { text: title }), body ? h("div.tbody", { text: body }) : null);
  box.appendChild(el);
  while (box.children.length > MAX_SHOWN) box.firstChild.remove();
  setTimeout(() => el.remove(), kind === "error" ? ms * 1.6 : ms);
  return el;
}

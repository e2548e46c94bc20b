import { h } from "../dom.js";

/** A short message in the corner; text only (textContent). */
export function toast(title, body = "", kind = "info", ms = 4200) {
  const box = document.getElementById("toasts");
  const el = h("div.toast" + (kind === "error" ? ".error" : ""), { role: kind === "error" ? "alert" : "status" },
    h("div.ttitle", { text: title }), body ? h("div.tbody", { text: body }) : null);
  box.appendChild(el);
  while (box.children.length > 5) box.firstChild.remove();
  setTimeout(() => el.remove(), kind === "error" ? ms * 1.6 : ms);
  return el;
}

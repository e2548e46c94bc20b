import { h, clear } from "../dom.js";

const menu = () => document.getElementById("menu");

/** Open a menu of items [{label, key, enabled, run} | "-" ] at (x, y) or under an element. */
export function openMenu(title, items, at) {
  const el = menu();
  clear(el);
  if (title) el.appendChild(h("div.mtitle", { text: title }));
  for (const item of items) {
    if (item === "-") { el.appendChild(h("hr")); continue; }
    const button = h("button", { type: "button", disabled: item.enabled === false, dataset: { item: item.id || "" },
      onclick: () => { closeMenu(); item.run(); } },
      h("span", { text: item.label }), item.key ? h("kbd", { text: item.key }) : null);
    el.appendChild(button);
  }
  el.hidden = false;
  let x, y;
  if (at instanceof Element) { const r = at.getBoundingClientRect(); x = r.left; y = r.bottom + 4; }
  else { x = at.x; y = at.y; }
  const w = el.offsetWidth, hgt = el.offsetHeight;
  el.style.left = Math.max(4, Math.min(window.innerWidth - w - 4, x)) + "px";
  el.style.top = Math.max(4, Math.min(window.innerHeight - hgt - 4, y)) + "px";
  const first = el.querySelector("button:not(:disabled)");
  if (first) first.focus({ preventScroll: true });
}

export function closeMenu() { const el = menu(); if (!el.hidden) el.hidden = true; }

export function menuOpen() { return !menu().hidden; }

document.addEventListener("mousedown", e => { if (!menu().contains(e.target)) closeMenu(); });
window.addEventListener("blur", closeMenu);

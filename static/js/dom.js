// DOM helpers. User-controlled text only ever goes in through textContent (never as HTML markup).

/** h("div.card.big#id", {title: "x", onclick: fn, dataset: {id: 1}}, "text", child, ...) */
export function h(spec, attrs, ...children) {
  const hash = spec.indexOf("#");
  const id = hash >= 0 ? spec.slice(hash + 1) : null;
  const [tag, ...classes] = (hash >= 0 ? spec.slice(0, hash) : spec).split(".");
  const el = document.createElement(tag || "div");
  if (classes.length) el.className = classes.join(" ");
  if (id) el.id = id;
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else if (k === "class") el.className = v;
      else if (k in el && typeof v !== "string") el[k] = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Set text only when it changed (cheap updates at 30 frames per second). */
export function setText(el, text) {
  const s = text === null || text === undefined ? "" : String(text);
  if (el.__text !== s) { el.textContent = s; el.__text = s; }
}

export function setClass(el, name, on) {
  const want = Boolean(on);
  if (el.classList.contains(name) !== want) el.classList.toggle(name, want);
}

export function setStyle(el, prop, value) {
  if (el.style[prop] !== value) el.style[prop] = value;
}

/** Keyed reconciliation: one element per item, created once, updated in place, removed when gone.
 *  Returns the Map key -> element. Keeps DOM order equal to items' order. */
export function reconcile(container, items, keyOf, create, update, cache = container.__keyed || new Map()) {
  container.__keyed = cache;
  const seen = new Set();
  let prev = null;
  for (const item of items) {
    const key = keyOf(item);
    seen.add(key);
    let el = cache.get(key);
    if (!el) { el = create(item); cache.set(key, el); }
    update(el, item);
    const next = prev ? prev.nextSibling : container.firstChild;
    if (next !== el) container.insertBefore(el, next);
    prev = el;
  }
  for (const [key, el] of cache) {
    if (!seen.has(key)) { el.remove(); cache.delete(key); }
  }
  return cache;
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

// Small DOM and fetch helpers shared by the analytics pages (text through textContent only).
export const $ = (sel) => document.querySelector(sel);

export async function getJSON(url, options) {
  const res = await fetch(url, options);
  const body = await res.json().catch(() => ({ ok: false, error: { message: res.statusText } }));
  return { status: res.status, body };
}

export function td(tr, content, cls) {
  const cell = document.createElement("td");
  if (content instanceof Node) cell.appendChild(content); else cell.textContent = content ?? "";
  if (cls) cell.className = cls;
  tr.appendChild(cell);
  return cell;
}

export function link(href, label, cls) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = label;
  if (cls) a.className = cls;
  return a;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes, appended to ``parent`` when given. */
export function svgEl(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

/** SVG text centred on (x, y) by default; the content goes in as textContent. */
export function svgText(parent, x, y, content, cls, anchor = "middle") {
  const t = svgEl("text", { x, y, class: cls || "", "text-anchor": anchor, "dominant-baseline": "middle" }, parent);
  t.textContent = content;
  return t;
}

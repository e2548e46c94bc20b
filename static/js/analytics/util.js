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

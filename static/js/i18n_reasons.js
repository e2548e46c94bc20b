// The engine's sentences in the page's language (issue 33): each history event's `reason` on the
// timeline and each violation's `detail` in the alarm bar. The engine writes them in English with
// values inside, and a room's frames are shared by viewers of either language, so the page
// translates them as it shows them, with the pattern table the server embedded next to the
// catalog (app/i18n/reasons.py: a regular expression per msgid, most specific first, and its
// msgstr). A slot whose name starts with "why" holds a reason of its own and is translated in
// turn; reasons joined by "; " are translated part by part; a reason no pattern matches stays
// English.

function readTable() {
  const el = typeof document !== "undefined" ? document.getElementById("i18n-reasons") : null;
  if (!el) return [];
  try {
    return (JSON.parse(el.textContent) || []).map(([source, msgstr]) => [new RegExp(`^(?:${source})$`, "s"), msgstr]);
  } catch (e) { return []; }
}

const table = readTable();
const cache = new Map();

function fill(msgstr, groups) {
  return msgstr.replace(/%\((\w+)\)s|%%/g, (all, name) => (name === undefined ? "%" : groups[name]));
}

/** [text in the page's language, whether all of it was translated]. */
function translate(text) {
  for (const [regex, msgstr] of table) {
    const m = regex.exec(text);
    if (!m) continue;
    const groups = {};
    let complete = true;
    for (const [name, value] of Object.entries(m.groups || {})) {
      if (name.startsWith("why")) {
        const [inner, done] = translate(value);
        groups[name] = inner;
        complete = complete && done;
      } else groups[name] = value;
    }
    return [fill(msgstr, groups), complete];
  }
  if (text.includes("; ")) {
    const parts = text.split("; ").map(translate);
    if (parts.every(p => p[1])) return [parts.map(p => p[0]).join("；"), true];
  }
  return [text, false];
}

/** An engine sentence (a reason, a violation's detail) in the page's language, or as it is. */
export function reason(text) {
  if (typeof text !== "string" || !text || !table.length) return text;
  let out = cache.get(text);
  if (out === undefined) {
    out = translate(text)[0];
    if (cache.size > 5000) cache.clear();
    cache.set(text, out);
  }
  return out;
}

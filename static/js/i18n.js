// The page's words in its language: t("…") looks a msgid up in the catalog the server embedded in
// the page (<script type="application/json" id="i18n-catalog">, built from the same gettext
// catalog as the templates: app/i18n/catalog.py) and fills "{name}" slots from `params`.
// `pybabel extract` finds the msgids through the keyword t (babel.cfg), so a msgid must be a
// plain string literal: t("Crash {n}", { n }), never t(`Crash ${n}`).

function readCatalog() {
  const el = typeof document !== "undefined" ? document.getElementById("i18n-catalog") : null;
  if (!el) return {};
  try { return JSON.parse(el.textContent) || {}; } catch (e) { return {}; }
}

const catalog = readCatalog();

/** The page's language tag: "zh-CN" or "en" (from <html lang>, which the server sets). */
export function lang() {
  const l = typeof document !== "undefined" ? document.documentElement.lang : "";
  return l === "zh-CN" ? "zh-CN" : "en";
}

/** The text of `msgid` in the page's language, with {name} replaced by params[name]. */
export function t(msgid, params) {
  const text = Object.prototype.hasOwnProperty.call(catalog, msgid) && catalog[msgid] ? catalog[msgid] : msgid;
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (all, name) => (Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : all));
}

/** Mark a msgid for extraction where it is translated later (a table built at load time). */
export function N_(msgid) { return msgid; }

/** `url` (absolute or a path) with lang=<the page's language>: a shared link opens in it. */
export function withLang(url) {
  const u = new URL(url, location.href);
  u.searchParams.set("lang", lang());
  return u.origin === location.origin && !/^https?:/.test(url) ? u.pathname + u.search + u.hash : u.href;
}

// The header's switch (templates/_lang_switch.html): reload this very page (its path and query, a
// room's /r/<id> included) in the language picked; the server keeps the choice in a cookie.
if (typeof document !== "undefined") {
  document.addEventListener("click", e => {
    const a = e.target instanceof Element ? e.target.closest("a[data-lang]") : null;
    if (!a) return;
    const u = new URL(location.href);
    u.searchParams.set("lang", a.dataset.lang);
    a.href = u.pathname + u.search + u.hash;
  });
}

/** The catalog's text for `text` when there is one, else `text` itself: for words that come
 *  with the data (a library story's title, an event's label from a table of N_() msgids), which
 *  pybabel finds where they are written, not at this call. */
export function known(text) {
  return typeof text === "string" && Object.prototype.hasOwnProperty.call(catalog, text) && catalog[text] ? catalog[text] : text;
}

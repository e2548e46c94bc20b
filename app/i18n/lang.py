"""The language of a request: ``?lang=`` (kept in a cookie), else the cookie, else the browser's
``Accept-Language``, else English (app/i18n)."""
from flask import has_request_context, request

#: the languages offered: the tag the page and links use -> Babel's locale name
LANGS = {"en": "en", "zh-CN": "zh_CN"}
DEFAULT_LANG = "en"
COOKIE = "isrlab_lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
#: what the switch shows for each language, in that language
NAMES = {"zh-CN": "中文", "en": "English"}


def lang_tag(value):
    """``"zh-CN"`` for zh-CN, zh_CN, zh-cn, zh, zh-Hans…; ``"en"`` for en, en-US…; else None."""
    if not isinstance(value, str):
        return None
    v = value.strip().replace("_", "-").lower()
    if v == "zh" or v.startswith("zh-cn") or v.startswith("zh-hans") or v == "zh-sg":
        return "zh-CN"
    if v == "en" or v.startswith("en-"):
        return "en"
    return None


def _from_accept_language():
    for value, _quality in request.accept_languages:     # best first
        tag = lang_tag(value)
        if tag:
            return tag
    return None


def select_lang():
    """The language tag of the current request (see the module's docstring for the order)."""
    if not has_request_context():
        return DEFAULT_LANG
    return (lang_tag(request.args.get("lang")) or lang_tag(request.cookies.get(COOKIE))
            or _from_accept_language() or DEFAULT_LANG)

"""The product's languages: English and 简体中文 (issue 33).

One set of gettext catalogs (``translations/<locale>/LC_MESSAGES/messages.po``, extracted by
``pybabel`` with ``babel.cfg``) serves the three places words come from:

* templates and Python, through Flask-Babel (``_``/``gettext``; the locale of each request comes
  from ``select_lang`` in ``lang.py``);
* the browser, through ``static/js/i18n.js``'s ``t("…")``: the page embeds the catalog of its
  language as JSON (``js_catalog``), read from the same compiled ``.mo`` file;
* the API's error replies: ``app.i18n.errors.localized`` translates a ``ScenarioError``'s
  ``message`` and ``allowed`` (its ``field`` stays the machine-readable English path).

The language of a request (``lang.py``): ``?lang=`` (``en`` or ``zh-CN``; a share link carries it), else the
``isrlab_lang`` cookie (set whenever ``?lang=`` chose one, so the choice sticks), else the
browser's ``Accept-Language``, else English. The compiled ``.mo`` files are build output: the
setup compiles them (``scripts/setup.sh``), and ``ensure_compiled`` here rebuilds a missing or
stale one so a checkout that skipped the setup still speaks Chinese.
"""
import os

from babel import Locale, support
from flask import has_request_context, request
from flask_babel import Babel, Domain, get_locale
from flask_babel import gettext as _gettext

from .catalog import ensure_compiled, js_catalog
from .errors import translate_message
from .reasons import browser_table
from .lang import COOKIE, COOKIE_MAX_AGE, DEFAULT_LANG, LANGS, NAMES, lang_tag, select_lang  # noqa: F401
from .fonts import bp as fonts_bp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRANSLATIONS = os.path.join(ROOT, "translations")


def _locale_selector():
    return LANGS[select_lang()]


class _Domain(Domain):
    """Flask-Babel's domain, finding a catalog by the name of its folder: Babel reads "zh_CN" as
    the locale zh_Hans_CN, whose name gettext would look for in translations/zh_Hans_CN."""

    _loaded = {}
    _folders = {str(Locale.parse(v)): v for v in LANGS.values()}      # "zh_Hans_CN" -> "zh_CN"

    def get_translations(self):
        if not has_request_context():
            return support.NullTranslations()
        name = str(get_locale())
        folder = self._folders.get(name, name)
        if folder not in self._loaded:
            self._loaded[folder] = support.Translations.load(TRANSLATIONS, [folder], "messages")
        return self._loaded[folder]


class _Babel(Babel):
    @property
    def domain_instance(self):
        return _DOMAIN


_DOMAIN = _Domain(translation_directories=[TRANSLATIONS])


def _remember_lang(response):
    """A page opened with ``?lang=`` keeps that language: the choice goes into a cookie."""
    asked = lang_tag(request.args.get("lang"))
    if asked and request.cookies.get(COOKIE) != asked:
        response.set_cookie(COOKIE, asked, max_age=COOKIE_MAX_AGE, samesite="Lax", httponly=False)
    return response


def _template_globals():
    lang = select_lang()
    return {"lang": lang, "lang_names": NAMES, "tr_message": translate_message,
            "js_catalog": lambda: js_catalog(TRANSLATIONS, LANGS[lang]),
            # the engine's reasons and violation details, matched in the browser (reasons.py)
            "reason_patterns": lambda: [] if lang == DEFAULT_LANG else browser_table(_gettext)}


def init_app(app):
    """Flask-Babel with this project's catalogs, the cookie, the template helpers, the font."""
    for locale in LANGS.values():
        ensure_compiled(TRANSLATIONS, locale)
    _Babel(app, locale_selector=_locale_selector, default_translation_directories=TRANSLATIONS)
    app.after_request(_remember_lang)
    app.context_processor(_template_globals)
    app.register_blueprint(fonts_bp)
    return app

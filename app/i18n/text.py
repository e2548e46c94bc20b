"""Words the server writes itself, in the reader's language, inside and outside a request.

``_("… %(name)s …", name=value)`` is Flask-Babel's ``gettext`` in a request (the request's
language, ``lang.py``); outside one (the ``isrlab`` command line, a test) it reads the process's
language, which ``use_lang`` sets (``app/cli_lang.py`` picks it from ``--lang`` or the locale),
and is English by default. A msgid is a ``%``-template whose values are filled after the lookup,
so numbers and Kafka's names pass through unchanged. ``lazy`` is the same lookup made when the
text is read (click's help strings).
"""
import os

from babel import support
from flask import has_request_context
from flask_babel import gettext as _request_gettext

from .lang import LANGS

TRANSLATIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "translations")
_process = {"lang": "en", "translations": None}


def use_lang(tag):
    """Make ``tag`` (``"en"`` or ``"zh-CN"``) the language of words written outside a request."""
    from .catalog import ensure_compiled
    if tag not in LANGS or tag == "en":
        _process.update(lang="en", translations=None)
        return
    ensure_compiled(TRANSLATIONS, LANGS[tag])
    _process.update(lang=tag, translations=support.Translations.load(TRANSLATIONS, [LANGS[tag]], "messages"))


def process_lang():
    return _process["lang"]


def _(msgid, **values):
    """``msgid`` translated (request's language, else the process's), its ``%(name)s`` slots filled."""
    if has_request_context():
        return _request_gettext(msgid, **values)
    found = _process["translations"]
    text = found.gettext(msgid) if found is not None else msgid
    return text % values if values else text


def lazy(msgid):
    """``msgid`` translated when it is read, not when the module is imported: click's help strings
    are written at import, before ``isrlab`` has read ``--lang`` or the locale."""
    return support.LazyProxy(_, msgid, enable_cache=False)


def N_(text):
    """Mark a msgid for extraction without translating it here."""
    return text

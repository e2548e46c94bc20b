"""The compiled catalogs: building a ``.mo`` from its ``.po`` when it is missing or older, and the
browser's share of a catalog as a dict (the messages whose msgid occurs in ``static/`` or is a
library story's title or guide).

The ``.po`` is the source (committed); the ``.mo`` is build output (``scripts/setup.sh`` runs
``pybabel compile``). The page's ``t("…")`` reads the same ``.mo`` as the server's ``gettext``, so
there is one catalog, not a second hand-kept dictionary for JavaScript.
"""
import os
import threading

from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

_lock = threading.Lock()
_cache = {}          # locale -> (mtimes, dict)


def _paths(directory, locale):
    base = os.path.join(directory, locale, "LC_MESSAGES", "messages")
    return base + ".po", base + ".mo"


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None


def ensure_compiled(directory, locale):
    """Compile ``locale``'s ``.po`` to its ``.mo`` when the ``.mo`` is missing or older (an
    atomic replace: two processes starting at once both write a whole file)."""
    po, mo = _paths(directory, locale)
    if _mtime(po) is None:
        return False                      # English: the msgids are the text
    if _mtime(mo) is not None and _mtime(mo) >= _mtime(po):
        return False
    with open(po, "rb") as f:
        catalog = read_po(f, locale=locale)
    tmp = f"{mo}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        write_mo(f, catalog, use_fuzzy=False)
    os.replace(tmp, mo)
    return True


#: where the browser's msgids are found: its own code, the library's story titles and guides, and
#: the metrics' explanations and units, which the page translates at display time (a room's frames
#: carry the engine's English)
BROWSER_SOURCES = ("static/", "engine/scenario/library/", "engine/metrics/")


def _browser_ids(po):
    """The msgids of the catalog that the browser shows (by their locations)."""
    with open(po, "rb") as f:
        catalog = read_po(f)
    return {m.id for m in catalog if m.id and any(path.startswith(BROWSER_SOURCES) for path, _ in m.locations)}


def js_catalog(directory, locale):
    """``{msgid: msgstr}`` of the browser's messages in ``locale`` (empty for English)."""
    po, mo = _paths(directory, locale)
    stamp = (_mtime(po), _mtime(mo))
    if stamp[0] is None:
        return {}
    hit = _cache.get(locale)
    if hit and hit[0] == stamp:
        return hit[1]
    with _lock:
        ensure_compiled(directory, locale)
        stamp = (_mtime(po), _mtime(mo))
        with open(mo, "rb") as f:
            compiled = read_mo(f)
        wanted = _browser_ids(po)
        out = {m.id: m.string for m in compiled if isinstance(m.id, str) and m.id in wanted and m.string}
        _cache[locale] = (stamp, out)
        return out

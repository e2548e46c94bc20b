"""The library's stories as msgids: a babel extractor for ``engine/scenario/library/*.json``.

A story's ``name`` and ``description`` are the engine's own English (saved in runs, part of the
golden digests), so they are never edited for a language; the page shows their translation
instead. ``babel.cfg`` registers ``extract_library`` (``[extractors]``), so ``scripts/i18n.sh
update`` finds a new story's words in the one catalog, with no hand-kept copy of the English.
"""
import json

#: the fields of a library document that a person reads
FIELDS = ("name", "description")


def extract_library(fileobj, keywords, comment_tags, options):
    """Yield ``(lineno, funcname, message, comments)`` for each story field (babel's protocol)."""
    text = fileobj.read().decode("utf-8")
    doc = json.loads(text)
    for field in FIELDS:
        value = doc.get(field)
        if isinstance(value, str) and value:
            yield _line_of(text, field), None, value, [f"library story {field}"]


def _line_of(text, field):
    """The line of ``"field":`` in the JSON text (1-based), for the catalog's location."""
    at = text.find(f'"{field}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1

"""The metrics catalog's words as msgids: a babel extractor for ``engine/metrics/catalog.py``.

Each metric's ``what`` (its explanation) and ``unit`` are the engine's English, sent to the page
with the metrics (``metrics_of``); the engine stays free of any language, so the page shows their
translation (``known()`` in ``static/js/render/metrics.js``). The catalog is read as Python source
(``ast``), not imported: extraction runs no engine code.
"""
import ast

#: the keys of a metric entry that a person reads
FIELDS = ("what", "unit")
#: units that are symbols, the same in every language
SYMBOLS = {"ms"}


def extract_metrics(fileobj, keywords, comment_tags, options):
    """Yield ``(lineno, funcname, message, comments)`` for each metric's words (babel's protocol)."""
    tree = ast.parse(fileobj.read().decode("utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if (isinstance(key, ast.Constant) and key.value in FIELDS and isinstance(value, ast.Constant)
                    and isinstance(value.value, str) and value.value not in SYMBOLS):
                yield value.lineno, None, value.value, [f"metric {key.value}"]

"""JSON from clients, bounded: nesting depth, and text that can be stored.

Python's ``json`` recurses once per nesting level, so a body of 100,000 ``[`` would reach the
interpreter's recursion limit (a 500) before any route looked at it; and JSON's ``\\ud800``
escapes decode to lone surrogates that cannot be encoded to UTF-8 when the text is saved. Both
are refused when the JSON is read — in HTTP bodies and Socket.IO packets (``app.web.inputs``) and
in link codes (``app.replay.links``) — with an error that names what is wrong.
"""
import json
import re

from .errors import UserError

MAX_DEPTH = 32
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


class UnsafeJSON(UserError):
    """JSON this server does not read (too deep, or text with lone surrogates)."""


def check_depth(text, max_depth=MAX_DEPTH, field="body"):
    """Refuse JSON text nested deeper than ``max_depth`` before it is parsed (strings skipped)."""
    if text.count("[") + text.count("{") <= max_depth:
        return                                           # cannot be too deep: the common case
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise UnsafeJSON(field, f"is nested more than {max_depth} levels deep", f"at most {max_depth} levels")
        elif token in "]}":
            depth -= 1


def check_text(value, field="body"):
    """Refuse strings (values and keys) that hold lone surrogates: they cannot be stored."""
    stack = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            _encodable(item, where)
        elif isinstance(item, dict):
            for key, sub in item.items():
                _encodable(key, where)
                stack.append((sub, f"{where}.{key}"[:120]))
        elif isinstance(item, list):
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(item))


def _encodable(text, where):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsafeJSON(where, "contains a lone surrogate (\\ud800-\\udfff) that is not text",
                         "valid Unicode text") from None


def loads_checked(text, field="body", max_depth=MAX_DEPTH):
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise UnsafeJSON(field, "is not UTF-8", "a UTF-8 JSON document") from None
    check_depth(text, max_depth, field)
    value = json.loads(text)
    check_text(value, field)
    return value

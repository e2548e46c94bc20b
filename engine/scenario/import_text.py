"""What the importers of Kafka's tool output share (docs/scenario-format.md §7): the one error
type, which names the pasted text and the line, and the bounds every pasted text is read with.

People paste from terminals: tabs become runs of spaces, lines gain trailing blanks or a carriage
return. The readers are tolerant of that and strict about meaning: a line that is not what the
tool prints is refused with its number and what was expected there, never skipped.
"""
import re

from engine.scenario.fields import ScenarioError

MAX_TEXT_BYTES = 1_000_000
MAX_TEXT_LINES = 20_000
BROKER_ID_MAX = 10 ** 9            # engine/scenario/document.py _brokers: ids 0..10**9
_INT = re.compile(r"^-?[0-9]{1,19}$")


class ImportRefused(ScenarioError):
    """A pasted text that cannot be imported. ``field`` names the text and the line ("describe
    line 7"); ``too_large`` marks a refusal for size, which the web answers with HTTP 413."""

    def __init__(self, field, message, allowed=None, too_large=False):
        super().__init__(field, message, allowed)
        self.too_large = too_large


def where(source, number):
    return f"{source} line {number}" if number else source


def numbered_lines(text, source):
    """The text's lines as (number, line without trailing blanks), blank lines left out; refuses
    a text over the size or line bounds, naming the bound."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportRefused(source, "is not UTF-8 text", "the tool's output as text") from None
    if not isinstance(text, str):
        raise ImportRefused(source, "is not text", "the tool's output as text")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise ImportRefused(source, f"is {size:,} bytes", f"at most {MAX_TEXT_BYTES:,} bytes", too_large=True)
    lines = text.splitlines()
    if len(lines) > MAX_TEXT_LINES:
        raise ImportRefused(source, f"has {len(lines):,} lines", f"at most {MAX_TEXT_LINES:,} lines", too_large=True)
    return [(i, line.rstrip()) for i, line in enumerate(lines, 1) if line.strip()]


def integer(value, field, what, lo=None, hi=None):
    """``value`` (text) as an integer in [lo, hi], or a refusal naming ``what`` and the range."""
    value = value.strip()
    allowed = what if lo is None else f"{what} ({lo} to {hi:,})" if hi is not None else f"{what} (from {lo})"
    if not _INT.match(value):
        raise ImportRefused(field, f"{value[:40]!r} is not a whole number", allowed)
    number = int(value)
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        raise ImportRefused(field, f"{number} is out of range", allowed)
    return number


def broker_ids(value, field, column, allow_empty=True):
    """A comma-separated list of broker ids as kafka-topics.sh prints Replicas / Isr (``1,2,3``;
    empty for an empty ISR). Spaces around the commas are tolerated."""
    value = value.strip()
    if not value:
        if allow_empty:
            return []
        raise ImportRefused(field, f"{column} is empty", f"{column}: broker ids separated by commas, e.g. 1,2,3")
    ids = [integer(part, field, f"{column}: broker ids separated by commas", 0, BROKER_ID_MAX)
           for part in value.split(",")]
    if len(set(ids)) != len(ids):
        raise ImportRefused(field, f"{column} names a broker twice ({value})", f"{column}: distinct broker ids")
    return ids


def examples(items, limit=5):
    """``a, b, c`` or ``a, b, c, d, e and 7 more``: notes name a few cases, not hundreds."""
    items = list(items)
    shown = ", ".join(str(i) for i in items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


def name_brokers(ids, verbs=None):
    """``broker 3 holds`` / ``brokers 3, 4 hold``: ``verbs`` is (singular, plural) or None."""
    ids = list(ids)
    one = len(ids) == 1
    text = ("broker " if one else "brokers ") + examples(ids)
    return text if verbs is None else f"{text} {verbs[0] if one else verbs[1]}"


def plural(n, word, many=None):
    return f"{n} {word if n == 1 else (many or word + 's')}"

"""Write ``app/i18n/error_messages.py``: the msgids of every error message the code raises
(``app.i18n.error_sources``) that ``app/i18n/errors.py`` does not list already. Run it after
adding an error, then ``scripts/i18n.sh update`` and fill the new msgstrs
(``tests/i18n/test_error_messages.py`` fails until both are done).

    PYTHONPATH=. .venv/bin/python scripts/error_messages.py
"""
from app.i18n import errors
from app.i18n.error_sources import ROOT, SLOT, raised_messages, shape

HEAD = '''"""The user's error messages, as msgids of the catalog: written by ``scripts/error_messages.py``
from every ``ScenarioError`` the code raises (``app.i18n.error_sources``), less those
``app/i18n/errors.py`` lists by hand. ``errors.translate_message`` matches them; do not edit by
hand, run the script."""


def N_(text):
    return text


#: {source file: [msgid, ...]}: with ``%(name)s`` slots for the values the code puts in
BY_SOURCE = {
'''


#: messages made only of names the code and Kafka use (field lists, literals): nothing to translate
EXCLUDE = {
    "property, what_if, sweeps, saved, label", '{"name": ..., "param": ...}', '{"kafka_version", "keep_config", "set"}',
    "scenario, property, runs, budget_s, profile", "sqlite, postgresql", "kafka_version, config, acks, seed",
    "play, pause, step, speed, restart, replay, pause_on_violation, pause_at, run_to",
    "t, event, step, cursor, base, playing", "q, era, outcome, scenario, source, limit, offset, order, facets",
    '"user"', "string, integer, null", "rate_per_min, min_ms, max_ms",
    '"format": "%(EXPORT_FORMAT)s", "version": 1', "MarkedForDeletion: %(marked)s", "MarkedForDeletion: true",
    "ReplicationFactor: %(size)s", "0..%(partitions)s", "%(duration)s ms"
}


def _adjacent(msgid):
    return bool(SLOT.search(msgid) and re.search(r"\)s%\(", msgid))


import re  # noqa: E402


def main():
    known = {shape(m) for m in errors.HAND_PATTERNS + errors.PLAIN}
    by_source = {}
    for msgid, where in sorted(raised_messages().items(), key=lambda kv: kv[1][0]):
        if shape(msgid) in known or _adjacent(msgid) or msgid in EXCLUDE:
            continue
        known.add(shape(msgid))
        by_source.setdefault(where[0].split(":")[0], []).append(msgid)
    lines = [HEAD]
    for source in sorted(by_source):
        lines.append(f"    {source!r}: [\n")
        lines.extend(f"        N_({m!r}),\n" for m in by_source[source])
        lines.append("    ],\n")
    lines.append("}\n")
    (ROOT / "app/i18n/error_messages.py").write_text("".join(lines), encoding="utf-8")
    print(sum(map(len, by_source.values())), "messages")


if __name__ == "__main__":
    main()

"""Error replies in the reader's language: ``localized(error)`` translates the ``message`` and
``allowed`` of a ``{field, message, allowed}`` error; ``field`` stays as it is, the English path
that code and the form match on (``topics[0].replication_factor``).

The engine builds its messages in English (it knows nothing of requests or languages), many with
values inside (``"7 is out of range"``). A message is looked up as it is, and otherwise matched
against ``PATTERNS``: msgids whose ``%(name)s`` slots match any text, so the translated template
gets the same values back. A message that matches nothing stays English.

The messages are listed twice over: by hand below (``HAND_PATTERNS``, ``PLAIN``), and collected
from every ``ScenarioError`` the code raises into ``error_messages.py`` (``scripts/error_messages.py``;
``tests/i18n/test_error_messages.py`` fails on a raised message neither list holds). Patterns are
tried most literal first; a value that is itself a message (``holds a scenario that <message>``)
is translated in turn.
"""
import re

from flask import has_request_context

from .error_messages import BY_SOURCE
from .lang import select_lang
from .text import _ as gettext


def N_(text):
    """Mark a msgid for extraction without translating it here."""
    return text


#: the engine's and the application's messages with values in them (engine/scenario/fields.py,
#: validators.py, timeline.py; app/replay/links.py; app/quotas.py...), and the words of `allowed`
HAND_PATTERNS = [
    # engine/scenario/fields.py
    N_("%(value)s is not an integer"), N_("%(value)s is out of range"), N_("%(value)s is not a string"),
    N_("%(value)s is not an object"), N_("%(value)s is not a list"), N_("%(value)s is not a boolean"),
    N_("is %(n)s characters long"), N_("has %(n)s entries"),
    N_("an integer >= %(lo)s"), N_("an integer <= %(hi)s"), N_("an integer from %(lo)s to %(hi)s"),
    N_("an integer < %(hi)s"), N_("at most %(n)s"),
    N_("unknown config key %(key)s for kafka_version %(version)s; Kafka %(version2)s has no %(key2)s"),
    N_("unknown config key %(key)s for kafka_version %(version)s"),
    N_("%(key)s is a %(scope)s config and cannot be set here"), N_("config keys of scope %(scopes)s"),
    N_("%(value)s is not a valid %(key)s"), N_("%(value)s is not a supported era"),
    # engine/scenario/validators.py and document.py
    N_("duplicate topic %(name)s"), N_("%(total)s partitions in all"),
    N_("%(name)s is not a legal Kafka topic name"), N_("broker %(id)s does not exist"),
    N_("broker ids %(ids)s"), N_("one of %(ids)s"), N_("%(name)s is not a usable client name"),
    N_("duplicate client %(name)s"), N_("unknown topic %(name)s"), N_("unknown client %(name)s"),
    N_("%(wait)s must be less than replica.lag.time.max.ms %(lag)s"),
    N_("not valid JSON: %(detail)s"),
    # engine/scenario/timeline.py: commands on the live page
    N_("%(op)s is not an operation"),
    N_("cannot %(what)s broker %(id)s: it is %(state)s at that point of the timeline"),
    N_("a broker that is %(states)s"), N_("%(name)s is a consumer"), N_("%(name)s is a producer"),
    N_("%(mode)s is not a crash mode"), N_("%(value)s is not a node of this cluster"),
    N_("topic %(name)s already exists"), N_("%(key)s cannot be changed at run time here"),
    # app/: links, quotas, jobs
    N_("%(value)s is not a partition of this scenario"), N_("%(t)s ms is after the end of the run"),
    N_("milliseconds from 0 to %(end)s"), N_("0 to %(end)s"), N_("%(value)s is not a time"),
    N_("is %(n)s bytes as JSON, too large for a link"), N_("makes a link of %(n)s characters"),
    N_("the server is busy: %(n)s %(lane)s jobs are waiting"),
    N_("sweep %(id)s already exists with a different document"), N_("no sweep %(id)s"),
    N_("%(value)s is not an event of this server"),
    # app/jobs.py: why a job stopped (a job's error, read in the reader's language: job_text.py)
    N_("stopped after its time limit of %(s)s s"),
    N_("stopped: the server's memory reached %(rss)s MB, over its limit of %(limit)s MB"),
    # the counterexample search's report (engine/tools/search.py PROPERTIES, app/counterexample/service.py),
    # read in the reader's language by job_text.py
    N_("the named engine invariant holds (%(name)s: invariant name)"),
    N_("no partition is offline longer than %(ms)s ms"),
    N_("no produce request fails with the named Kafka error (%(error)s)"),
    N_("not found in %(runs)s runs (%(stopped_by)s, %(s)s s)"),
    # the error pages (app/web/replays.py, links.py, common.py)
    N_("There is no saved run %(id)s (it may have been deleted)."),
    # app/rooms/mq.py: why rooms are unavailable to a web process sharing a Redis
    N_("cannot reach Redis at %(url)s (%(detail)s)"), N_("the room host did not answer within %(s)s s"),
]

# messages without values: extracted here so the catalog has them (looked up as they are)
PLAIN = [
    N_("unknown field"), N_("an integer"), N_("a string"), N_("a JSON object"), N_("a JSON list"),
    N_("true or false"), N_("is empty"), N_("has duplicate ids"), N_("distinct names"),
    N_("distinct integer ids"), N_("1 or more broker ids"), N_("no such partition"),
    N_("needs distinct broker ids"), N_("a non-empty list"), N_("replica lists differ in length"),
    N_("one replication factor"), N_("missing"), N_("a producer name"), N_("a consumer name"),
    N_("a new name"), N_("a node cannot be cut from itself"), N_("another node"),
    N_("give both from and to, or neither"), N_("needs a topic"), N_("topic + partition"),
    N_("partition reassignment is not simulated yet"), N_("must be a string or integer"),
    N_("1-249 characters from a-z A-Z 0-9 . _ -"), N_("a letter, then letters, digits, . _ -"),
    N_("a topic of the scenario"), N_("a client name"),
    N_("the request body is larger than this server accepts"), N_("internal error (logged on the server)"),
    N_("give either a scenario or a run"), N_("is not a run id"), N_("the id of a saved run"),
    N_("malformed job id"), N_("no such job (finished jobs are kept for ten minutes)"),
    N_("a job id from a 202 reply"), N_("wait for it to finish"), N_("another id"),
    N_("is out of range"), N_("a cell of the sweep"), N_("The server refused the scenario"),
    N_("cancelled"), N_("no acknowledged record is lost"), N_("no record acknowledged with acks=all is lost"),
    N_("no engine invariant is violated"), N_("internal error"), N_("a smaller scenario (shorter duration_ms, fewer partitions or a lower rate_per_s), or try "
                        "again when the server is less busy"),
    # the error pages' titles and messages (templates/runs_error.html)
    N_("no room host is running"), N_("the room host stopped while answering (its rooms are gone)"),
    N_("This link cannot be opened"), N_("No such run"), N_("Nothing to replay"), N_("Not a link"),
    N_("This short link is malformed."), N_("This link points to a run that does not exist (any more)."),
]


#: every message with values, hand-listed or collected from the code (``error_messages.py``)
PATTERNS = HAND_PATTERNS + [m for msgids in BY_SOURCE.values() for m in msgids if "%(" in m]


def _literal_length(msgid):
    return len(re.sub(r"%\(\w+\)s", "", msgid))


def _regex(msgid):
    parts = re.split(r"%\((\w+)\)s", msgid)
    out = []
    for i, part in enumerate(parts):
        out.append(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)")
    return re.compile("".join(out), re.S)


#: tried most literal first, so a specific message wins over a general one that also matches
_COMPILED = [(_regex(m), m) for m in sorted(PATTERNS, key=_literal_length, reverse=True)]


def translate_message(text):
    """``text`` in the request's language when the catalog knows it (as it is or by pattern)."""
    if not isinstance(text, str) or not text:
        return text
    plain = gettext(text)
    if plain != text:
        return plain
    for regex, msgid in _COMPILED:
        found = regex.fullmatch(text)
        if found:
            # a value may be a message of its own ("holds a scenario that <message>")
            # (a single word is a value: a topic named "text" stays "text")
            values = {k: translate_message(v) if " " in v else v for k, v in found.groupdict().items()}
            return gettext(msgid, **values)
    return text


def localized(error):
    """A copy of an error dict with ``message`` and ``allowed`` translated (``field`` kept)."""
    if not has_request_context() or not isinstance(error, dict):
        return error
    if select_lang() == "en":
        return error
    out = dict(error)
    for key in ("message", "allowed"):
        out[key] = translate_message(error.get(key))
    return out

"""The counterexample search's narration in the reader's language (issue 33).

``engine/tools/search.py``'s ``narrate`` writes each step in English, as part of a report that
scripts and the ``--json`` output read: ``broker 1: t-0: <the event's reason>``, an AlterIsr /
AlterPartition sentence of ``engine/narration.py``, and a last step that says how the property
broke (``check_property``'s ``detail``). The engine keeps those words; this module translates a
step as a reply shows it: the ``broker N:`` and ``<partition>:`` prefixes, then the sentence
against ``PATTERNS`` (the search's own sentences) plus the timeline's reason patterns
(``app/i18n/reasons.py``), with the same matching. A step that matches nothing stays English.
"""
import re

from . import reasons
from .text import _, N_

#: the sentences the search writes itself, values as ``%(name)s`` (Kafka's names kept)
PATTERNS = [
    # engine/tools/search.py check_property: how the property broke
    N_("%(n)s acknowledged record(s) lost, e.g. %(record)s (acks=%(acks)s, offset %(offset)s of %(partition)s)"),
    N_("%(partition)s offline for %(span)s ms > %(param)s ms (from %(start)s ms)"),
    # engine/narration.py explain_alter_partition
    N_("leader %(broker)s sends %(api)s for %(partition)s to the controller: ISR %(isr)s (leaderEpoch %(epoch)s, "
       "partitionEpoch %(pepoch)s); the ISR stays pending, acks=all still counts the committed ISR"),
    N_("the controller wrote ISR %(isr)s of %(partition)s to ZooKeeper (zkVersion %(version)s) and answered "
       "%(api)s: the leader commits it"),
    N_("the controller refused %(api)s for %(partition)s (ISR %(isr)s, leaderEpoch %(epoch)s, partitionEpoch "
       "%(pepoch)s): %(error)s - %(why)s"),
    # engine/narration.py ALTER_ERRORS, and what the leader does on any other error
    N_("the controller knows a newer leader epoch; the partition stays pending until the LeaderAndIsr of the "
       "new epoch arrives"),
    N_("the partition epoch (zkVersion) sent is not the znode's; the leader waits for the LeaderAndIsr that "
       "brings the new one"),
    N_("KIP-841: a proposed replica is shutting down or not alive; the leader goes back to its committed ISR"),
    N_("that broker is not the controller; the request goes to the controller named in the metadata"),
    N_("the leader's broker epoch is stale; the request is rebuilt and sent again"),
    N_("the leader keeps its committed ISR"),
]

_COMPILED = reasons.compile_patterns(PATTERNS + reasons.PATTERNS)

# narrate's prefixes: "broker <id>: " (who), then "<topic>-<partition>: " (where)
_WHO = re.compile(r"broker (?P<broker>-?\d+): (?P<rest>.*)", re.S)
_WHERE = re.compile(r"(?P<partition>[^\s:;]+-\d+): (?P<rest>.*)", re.S)
# a property's detail that starts with an invariant id or a Kafka error: "acked_record_lost: …"
_NAMED = re.compile(r"(?P<id>[A-Za-z]+(?:_[A-Za-z]+)+): (?P<rest>.*)", re.S)


def translate_sentence(text):
    """``(text in the reader's language, whether all of it was)``: one sentence of a step,
    without its prefixes; an invariant id or error name in front stays as it is."""
    out, done = reasons.translate_with(_COMPILED, text, _)
    if done or not isinstance(text, str):
        return out, done
    named = _NAMED.fullmatch(text)
    if named:
        rest, done = translate_sentence(named["rest"])
        return _("%(id)s: %(detail)s", id=named["id"], detail=rest), done
    return text, False


def translate_step_text(text):
    """A narration step's ``text`` in the reader's language."""
    if not isinstance(text, str):
        return text
    who = _WHO.fullmatch(text)
    if who:
        return _("broker %(broker)s: %(text)s", broker=who["broker"], text=translate_step_text(who["rest"]))
    where = _WHERE.fullmatch(text)
    if where:
        rest, done = translate_sentence(where["rest"])
        if done:
            return _("%(partition)s: %(text)s", partition=where["partition"], text=rest)
    return translate_sentence(text)[0]


def localized_narration(steps):
    """A copy of a report's ``narration`` whose steps' ``text`` is in the reader's language
    (``type``, ``t_ms`` and ``step`` stay as they are)."""
    if not isinstance(steps, list):
        return steps
    return [dict(s, text=translate_step_text(s.get("text"))) if isinstance(s, dict) else s for s in steps]

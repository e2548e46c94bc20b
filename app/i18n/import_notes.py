"""The notes of an imported cluster in the reader's language (issue 33).

``engine/scenario/import_cluster.py`` and ``import_notes.py`` write each note in English, with the
pasted cluster's values inside (``at import, broker 0 was out of the ISR of 2 partitions (orders-1,
orders-2); …``). The engine keeps its words (the scenario's ``description`` quotes them); the
import dialog's reply (``app/web/cluster_import.py``) and ``isrlab import-cluster`` translate each
note as they show it, by pattern (``app/i18n/reasons.py``'s matching): one msgid per sentence the
engine writes, singular and plural apart, as the engine spells them. A few phrases inside a list of
values (``orders-2 (leader 1, preferred 0)``, ``… and 7 more``) are translated first, in place. A
note that matches nothing stays English.
"""
import re

from . import reasons
from .text import _, N_

PATTERNS = [
    # engine/scenario/import_notes.py: the partition state a scenario's start cannot hold
    N_("at import, %(n)s partition had no leader (Leader: none): %(names)s; the simulation starts each with its "
       "first replica leading"),
    N_("at import, %(n)s partitions had no leader (Leader: none): %(names)s; the simulation starts each with its "
       "first replica leading"),
    N_("at import, %(n)s partition had a leader other than the preferred replica (the first of Replicas): "
       "%(names)s; the simulation starts with every preferred replica leading"),
    N_("at import, %(n)s partitions had a leader other than the preferred replica (the first of Replicas): "
       "%(names)s; the simulation starts with every preferred replica leading"),
    N_("at import, broker %(broker)s was out of the ISR of %(n)s partition (%(names)s); the simulation starts "
       "with every replica in sync"),
    N_("at import, broker %(broker)s was out of the ISR of %(n)s partitions (%(names)s); the simulation starts "
       "with every replica in sync"),
    N_("at import, broker %(broker)s's replica was offline in %(n)s partition (%(names)s); the simulation starts "
       "every replica online"),
    N_("at import, broker %(broker)s's replica was offline in %(n)s partitions (%(names)s); the simulation "
       "starts every replica online"),
    N_("at import, %(n)s partition had Eligible Leader Replicas: %(names)s; the simulation starts with none"),
    N_("at import, %(n)s partitions had Eligible Leader Replicas: %(names)s; the simulation starts with none"),
    N_("at import, %(n)s partition was being reassigned: %(names)s; the simulation starts with every replica of "
       "Replicas assigned and no reassignment"),
    N_("at import, %(n)s partitions were being reassigned: %(names)s; the simulation starts with every replica "
       "of Replicas assigned and no reassignment"),
    N_("topic %(names)s was marked for deletion at import; the simulation keeps it"),
    N_("topic %(names)s were marked for deletion at import; the simulation keeps it"),
    # engine/scenario/import_cluster.py: brokers, controllers, racks and topics
    N_("the KRaft quorum (voters %(voters)s) is not used: kafka_version %(version)s runs on ZooKeeper"),
    N_("broker %(brokers)s holds replicas but is not in the api-versions output (down at the time?); the "
       "simulation starts every broker running"),
    N_("brokers %(brokers)s hold replicas but are not in the api-versions output (down at the time?); the "
       "simulation starts every broker running"),
    N_("kafka-broker-api-versions.sh could not reach broker %(brokers)s; the simulation starts every broker running"),
    N_("kafka-broker-api-versions.sh could not reach brokers %(brokers)s; the simulation starts every broker "
       "running"),
    N_("at import, broker %(brokers)s was fenced; the simulation starts every broker unfenced"),
    N_("at import, brokers %(brokers)s were fenced; the simulation starts every broker unfenced"),
    N_("no kafka-metadata-quorum.sh output: the simulation uses three dedicated controllers %(ids)s"),
    N_("at import, controller %(controller)s led the quorum; the simulation's voters elect their own leader"),
    N_("voters %(voters)s include brokers %(brokers)s but not every broker: the simulator's combined mode makes "
       "every broker a voter, so the simulation uses dedicated controllers %(ids)s instead"),
    N_("broker %(brokers)s has no rack (rack: null, or not in the api-versions output)"),
    N_("brokers %(brokers)s have no rack (rack: null, or not in the api-versions output)"),
    N_("the racks (%(why_racks)s) are not modelled by this version of the simulator and were left out"),
    N_("topic configs the simulator does not model were left out: %(keys)s"),
    N_("internal topic %(names)s is imported as an ordinary topic"),
]

_COMPILED = reasons.compile_patterns(PATTERNS)

# phrases inside a list of values, translated before the note is matched (their translation
# holds no ":" or ";", so it fits a value's slot); a Chinese one takes no space before its "（"
def _spaced(text):
    return text if text.startswith("（") else " " + text


_PHRASES = [
    (re.compile(r" and (\d+) more\b"), lambda m: " " + _("and %(n)s more", n=m[1])),
    (re.compile(r" \(leader (-?\d+), preferred (-?\d+)\)"),
     lambda m: _spaced(_("(leader %(leader)s, preferred %(preferred)s)", leader=m[1], preferred=m[2]))),
    (re.compile(r" \(adding ([\d,-]+), removing ([\d,-]+)\)"),
     lambda m: _spaced(_("(adding %(adding)s, removing %(removing)s)", adding=m[1], removing=m[2]))),
    (re.compile(r" \((\d+) topics: ([^():;]*)\)"),
     lambda m: _spaced(_("(%(n)s topics: %(names)s)", n=m[1], names=m[2]))),
]


def translate_note(text):
    """One note in the reader's language (as it is when no pattern matches)."""
    if not isinstance(text, str):
        return text
    shown = text
    for regex, phrase in _PHRASES:
        shown = regex.sub(phrase, shown)
    out, done = reasons.translate_with(_COMPILED, shown, _)
    return out if out != shown or done else text


def localized_notes(notes):
    """A copy of an import's ``notes`` in the reader's language."""
    return [translate_note(n) for n in notes] if isinstance(notes, list) else notes

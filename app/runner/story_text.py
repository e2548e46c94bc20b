"""A story's words after its scenario moves to another era (issue 34, item 1).

Library stories are written for one Kafka release: "KIP-101 scenario 1 under 0.10" and its "what to
watch" describe what 0.10 does. Switched to another era (the era selector, a fork under another
version, the compare page), the same timeline runs by that era's rules and may tell another story.
The document then says so in its own words, so the live page, a saved run and its replay never
show a title or a guide that the run on screen contradicts:

* the name gains `` — rerun under <era>`` (replaced, not stacked, on a further switch);
* the description starts with a line saying which release it was written for, what the run
  follows instead, and — from a ZooKeeper era to KRaft — what replaces sessions and watches.

Switching back to the era the story was written for restores its own words.
"""
import re

from engine import eras

NAME_MAX = 200
#: the marker this module adds to a description, and reads back on a further switch
WRITTEN_FOR = re.compile(r"^\[Written for Kafka (?P<era>[^\]\s]+); rerun under [^\]]+\] ")
RERUN = re.compile(r" — rerun under \S+$")

KRAFT_NOTE = ("KRaft has no ZooKeeper: where the text below speaks of sessions, /brokers/ids or watches, "
              "the active controller fences a broker whose heartbeats stop for broker.session.timeout.ms "
              "and moves its leaderships with PartitionChangeRecords. ")


def own_words(doc):
    """(name, description, the era the words were written for) of ``doc``, markers removed."""
    description = doc.get("description", "") or ""
    match = WRITTEN_FOR.match(description)
    era = match.group("era") if match else doc.get("kafka_version")
    if match:
        description = description[match.end():]
        if description.startswith(KRAFT_NOTE):
            description = description[len(KRAFT_NOTE):]
    return RERUN.sub("", doc.get("name", "") or ""), description, era


def retell(doc, version):
    """``doc``'s name and description for a run under ``version`` (in place)."""
    if not isinstance(doc.get("name", ""), str) or not isinstance(doc.get("description", ""), str):
        return doc                                 # the engine names the field that is wrong
    name, description, written_for = own_words(doc)
    if version == written_for or not description:
        doc["name"], doc["description"] = name, description
        return doc
    suffix = f" — rerun under {version}"
    doc["name"] = name[:NAME_MAX - len(suffix)] + suffix
    note = KRAFT_NOTE if _kraft(version) and not _kraft(written_for) else ""
    doc["description"] = (f"[Written for Kafka {written_for}; rerun under {version}, whose rules may tell "
                          f"another story] {note}{description}")
    return doc


def _kraft(version):
    era = eras.ERAS.get(version)
    return bool(era and era.kraft)

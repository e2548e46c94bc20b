"""The compare page's sentences: what diverged, in Kafka's words (never raw JSON). A partition
state is ``(leader, leader epoch, ISR, offline)`` as ``app.replay.compare.partition_states`` gives.

Every sentence is a msgid of the catalog (``app.i18n.text._``): the reply is written in the
language of the request that asked for the comparison (issue 33). Values (times, broker ids,
partitions, ISRs) go into ``%(name)s`` slots, so they read the same in every language.
"""
from app.i18n.text import _


def seconds(ms):
    return f"{ms / 1000:.3f} s"          # as the page's clock and scrubber say it (format.js)


def _isr(isr):
    return "[" + ", ".join(str(b) for b in isr) + "]"


def _leader(state):
    leader, epoch = state[0], state[1]
    return _("no leader") if leader in (-1, None) else _("broker %(b)s (leader epoch %(e)s)", b=leader, e=epoch)


def _leader_words(before, after, key):
    if after[0] in (-1, None):
        return _("leaves %(p)s without a leader (leader epoch %(e)s)", p=key, e=after[1])
    if after[0] == before[0]:
        return _("bumps the leader epoch of %(p)s to %(e)s (leader still broker %(b)s)", p=key, e=after[1], b=after[0])
    return _("elects broker %(b)s for %(p)s (leader epoch %(e)s)", b=after[0], p=key, e=after[1])


def _isr_words(before, after, key):
    isr = _isr(after[2])
    if set(after[2]) < set(before[2]):
        return _("shrinks the ISR of %(p)s to %(isr)s", p=key, isr=isr)
    if set(after[2]) > set(before[2]):
        return _("expands the ISR of %(p)s to %(isr)s", p=key, isr=isr)
    return _("changes the ISR of %(p)s to %(isr)s", p=key, isr=isr)


def change_words(before, after, key):
    """What a run does to partition ``key`` going from ``before`` to ``after``."""
    words = []
    if before[:2] != after[:2]:
        words.append(_leader_words(before, after, key))
    if before[2] != after[2]:
        words.append(_isr_words(before, after, key))
    if before[3] != after[3] and before[:2] == after[:2]:
        words.append(_("takes %(p)s offline (its leader, broker %(b)s, is down)", p=key, b=after[0]) if after[3]
                     else _("brings %(p)s back online", p=key))
    if not words:
        return _("changes %(p)s", p=key)
    return words[0] if len(words) == 1 else _("%(first)s and %(then)s", first=words[0], then=words[1])


def keeps_words(state, key):
    """A run that does not change partition ``key`` at that point."""
    if state[0] in (-1, None):
        return _("keeps %(p)s without a leader (ISR %(isr)s)", p=key, isr=_isr(state[2]))
    return _("keeps broker %(b)s as leader of %(p)s (leader epoch %(e)s, ISR %(isr)s)",
             b=state[0], p=key, e=state[1], isr=_isr(state[2]))


def semantic_text(d):
    """The headline: the first semantic divergence in words."""
    if d["kind"] == "partitions":
        return _("the runs have different partitions: A has %(a)s; B has %(b)s",
                 a=", ".join(d["a"]["partitions"]), b=", ".join(d["b"]["partitions"]))
    if d["kind"] == "record":
        return record_text(d["record"])
    first, other = d["first"], "b" if d["first"] == "a" else "a"
    key, lead, rest = d["partition"], d[first], d[other]
    run, other_run = first.upper(), other.upper()
    text = _("at %(t)s run %(run)s %(does)s", t=seconds(lead["t_ms"]), run=run,
             does=change_words(lead["before"], lead["after"], key))
    if rest["after"] is None or rest["t_ms"] is None:
        return _("%(text)s, while run %(run)s %(keeps)s to the end", text=text, run=other_run,
                 keeps=keeps_words(rest["before"], key))
    if rest["t_ms"] == lead["t_ms"]:
        return _("%(text)s, while run %(run)s %(does)s", text=text, run=other_run,
                 does=change_words(rest["before"], rest["after"], key))
    return _("%(text)s, while run %(run)s %(keeps)s; at %(t)s run %(run2)s instead %(does)s", text=text,
             run=other_run, keeps=keeps_words(rest["before"], key), t=seconds(rest["t_ms"]), run2=other_run,
             does=change_words(rest["before"], rest["after"], key))


def fate_words(f):
    """One run's fate of a record."""
    if f is None:
        return _("never sends it")
    if f["status"] == "acked":
        acked, offset, lost = f.get("acked_ms"), f.get("offset"), f["lost"]
        if acked is not None and offset is not None:
            text = _("acknowledges it at %(t)s (offset %(o)s)", t=seconds(acked), o=offset)
        elif acked is not None:
            text = _("acknowledges it at %(t)s", t=seconds(acked))
        elif offset is not None:
            text = _("acknowledges it (offset %(o)s)", o=offset)
        else:
            text = _("acknowledges it")
        return _("%(acked)s, then loses it", acked=text) if lost else text
    if f["status"] == "failed":
        return _("fails it (the producer gets an error)")
    return _("has not settled it yet")


def record_text(r):
    """A record whose fate differs, in words: "run A loses record m17 acknowledged at 12.3 s ..."."""
    a, b, rid = r["a"], r["b"], r["id"]
    if r["why"] in ("lost_a", "lost_b"):
        loser, other = ("A", b) if r["why"] == "lost_a" else ("B", a)
        f = a if loser == "A" else b
        partition = "%s-%s" % (f.get("topic"), f.get("partition"))
        record = (_("record %(id)s in %(p)s", id=rid, p=partition) if f.get("topic") is not None
                  else _("record %(id)s", id=rid))
        values = {"run": loser, "record": record, "other": "B" if loser == "A" else "A", "fate": fate_words(other)}
        if f.get("acked_ms") is not None:
            return _("run %(run)s loses %(record)s acknowledged at %(t)s; run %(other)s %(fate)s",
                     t=seconds(f["acked_ms"]), **values)
        return _("run %(run)s loses %(record)s; run %(other)s %(fate)s", **values)
    return _("record %(id)s: run A %(a)s; run B %(b)s", id=rid, a=fate_words(a), b=fate_words(b))


def _replica_words(r):
    if r is None:
        return _("no replica")
    return f"LEO {r['leo']}, HW {r['hw']}"


def _online(offline):
    return _("offline") if offline else _("online")


def _controller(c):
    return _("none") if c is None else _("broker %(b)s", b=c)


def timing_text(d):
    """The first difference of any kind (often timing only), in words."""
    key, detail, kind = d.get("partition"), d.get("detail") or {}, d["kind"]
    t = seconds(d["t_ms"])
    if kind == "leader":
        a, b = detail["a"], detail["b"]
        return _("at %(t)s %(p)s's leader is %(a)s in run A, %(b)s in run B", t=t, p=key,
                 a=_leader((a["leader"], a["leader_epoch"])), b=_leader((b["leader"], b["leader_epoch"])))
    if kind == "isr":
        return _("at %(t)s the ISR of %(p)s is %(a)s in run A, %(b)s in run B", t=t, p=key,
                 a=_isr(detail["a"]), b=_isr(detail["b"]))
    if kind == "offline":
        return _("at %(t)s %(p)s is %(a)s in run A, %(b)s in run B", t=t, p=key,
                 a=_online(detail["a"]), b=_online(detail["b"]))
    if kind == "log":
        return _("at %(t)s broker %(broker)s's replica of %(p)s has %(a)s in run A, %(b)s in run B", t=t,
                 broker=detail["broker"], p=key, a=_replica_words(detail["a"]), b=_replica_words(detail["b"]))
    if kind == "controller":
        return _("at %(t)s the active controller is %(a)s in run A, %(b)s in run B", t=t,
                 a=_controller(detail["a"]), b=_controller(detail["b"]))
    if kind == "partitions":
        return _("at %(t)s the runs have different partitions", t=t)
    if kind == "record":
        return _("at the end: %(text)s", text=record_text(detail))
    return f"at {t} {kind}"

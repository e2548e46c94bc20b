"""The compare page's sentences: what diverged, in Kafka's words (never raw JSON). A partition
state is ``(leader, leader epoch, ISR, offline)`` as ``app.replay.compare.partition_states`` gives."""


def seconds(ms):
    return f"{ms / 1000:.3f} s"          # as the page's clock and scrubber say it (format.js)


def _isr(isr):
    return "[" + ", ".join(str(b) for b in isr) + "]"


def _leader(state):
    leader, epoch = state[0], state[1]
    return "no leader" if leader in (-1, None) else f"broker {leader} (leader epoch {epoch})"


def change_words(before, after, key):
    """What a run does to partition ``key`` going from ``before`` to ``after``."""
    words = []
    if before[:2] != after[:2]:
        if after[0] in (-1, None):
            words.append(f"leaves {key} without a leader (leader epoch {after[1]})")
        elif after[0] == before[0]:
            words.append(f"bumps the leader epoch of {key} to {after[1]} (leader still broker {after[0]})")
        else:
            words.append(f"elects broker {after[0]} for {key} (leader epoch {after[1]})")
    if before[2] != after[2]:
        verb = ("shrinks" if set(after[2]) < set(before[2]) else "expands" if set(after[2]) > set(before[2])
                else "changes")
        words.append(f"{verb} the ISR of {key} to {_isr(after[2])}")
    if before[3] != after[3] and before[:2] == after[:2]:
        words.append(f"takes {key} offline (its leader, broker {after[0]}, is down)" if after[3]
                     else f"brings {key} back online")
    return " and ".join(words) or f"changes {key}"


def keeps_words(state, key):
    """A run that does not change partition ``key`` at that point."""
    if state[0] in (-1, None):
        return f"keeps {key} without a leader (ISR {_isr(state[2])})"
    return f"keeps broker {state[0]} as leader of {key} (leader epoch {state[1]}, ISR {_isr(state[2])})"


def semantic_text(d):
    """The headline: the first semantic divergence in words."""
    if d["kind"] == "partitions":
        return (f"the runs have different partitions: A has {', '.join(d['a']['partitions'])}; "
                f"B has {', '.join(d['b']['partitions'])}")
    if d["kind"] == "record":
        return record_text(d["record"])
    first, other = d["first"], "b" if d["first"] == "a" else "a"
    key, lead, rest = d["partition"], d[first], d[other]
    text = f"at {seconds(lead['t_ms'])} run {first.upper()} {change_words(lead['before'], lead['after'], key)}"
    if rest["after"] is None or rest["t_ms"] is None:
        return text + f", while run {other.upper()} {keeps_words(rest['before'], key)} to the end"
    if rest["t_ms"] == lead["t_ms"]:
        return text + f", while run {other.upper()} {change_words(rest['before'], rest['after'], key)}"
    return (text + f", while run {other.upper()} {keeps_words(rest['before'], key)}; at "
            f"{seconds(rest['t_ms'])} run {other.upper()} instead {change_words(rest['before'], rest['after'], key)}")


def fate_words(f):
    """One run's fate of a record."""
    if f is None:
        return "never sends it"
    if f["status"] == "acked":
        at = f" at {seconds(f['acked_ms'])}" if f.get("acked_ms") is not None else ""
        where = f" (offset {f['offset']})" if f.get("offset") is not None else ""
        return f"acknowledges it{at}{where}" + (", then loses it" if f["lost"] else "")
    if f["status"] == "failed":
        return "fails it (the producer gets an error)"
    return "has not settled it yet"


def record_text(r):
    """A record whose fate differs, in words: "run A loses record m17 acknowledged at 12.3 s ..."."""
    a, b, rid = r["a"], r["b"], r["id"]
    if r["why"] in ("lost_a", "lost_b"):
        loser, other = ("A", b) if r["why"] == "lost_a" else ("B", a)
        f = a if loser == "A" else b
        at = f" acknowledged at {seconds(f['acked_ms'])}" if f.get("acked_ms") is not None else ""
        where = f" in {f['topic']}-{f['partition']}" if f.get("topic") is not None else ""
        return (f"run {loser} loses record {rid}{where}{at}; run {'B' if loser == 'A' else 'A'} "
                f"{fate_words(other)}")
    return f"record {rid}: run A {fate_words(a)}; run B {fate_words(b)}"


def _replica_words(r):
    if r is None:
        return "no replica"
    return f"LEO {r['leo']}, HW {r['hw']}"


def timing_text(d):
    """The first difference of any kind (often timing only), in words."""
    key, detail, kind = d.get("partition"), d.get("detail") or {}, d["kind"]
    at = f"at {seconds(d['t_ms'])}"
    if kind == "leader":
        a, b = detail["a"], detail["b"]
        return (f"{at} {key}'s leader is {_leader((a['leader'], a['leader_epoch']))} in run A, "
                f"{_leader((b['leader'], b['leader_epoch']))} in run B")
    if kind == "isr":
        return f"{at} the ISR of {key} is {_isr(detail['a'])} in run A, {_isr(detail['b'])} in run B"
    if kind == "offline":
        return f"{at} {key} is {'offline' if detail['a'] else 'online'} in run A, {'offline' if detail['b'] else 'online'} in run B"
    if kind == "log":
        return (f"{at} broker {detail['broker']}'s replica of {key} has {_replica_words(detail['a'])} in run A, "
                f"{_replica_words(detail['b'])} in run B")
    if kind == "controller":
        name = lambda c: "none" if c is None else f"broker {c}"  # noqa: E731
        return f"{at} the active controller is {name(detail['a'])} in run A, {name(detail['b'])} in run B"
    if kind == "partitions":
        return f"{at} the runs have different partitions"
    if kind == "record":
        return f"at the end: {record_text(detail)}"
    return f"{at} {kind}"

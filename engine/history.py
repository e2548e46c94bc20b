"""High-watermark moves kept compact: the commonest history event, as a tuple until it is read.

A run's history is a list of event dicts (docs/scenario-format.md §5). Nearly all of a sweep
run's are ``high_watermark`` moves (99% in the reference sweep workload), and a sweep reads none
of them: it keeps only their digest (``result.history_digest``). A simulation made with
``compact_history=True`` (what a sweep run uses, ``sweep_run.simulate``) appends each move as a
plain tuple in ``HW_FIELDS`` order instead, and leaves its reason unformatted. The digest turns
such a tuple into exactly the JSON text of the dict it stands for (``hw_json``), so the run's
digest is byte for byte the one the full history gives; ``expand`` gives the dict itself. Kept
long, a tuple costs the collector less than a dict and its text; and the reason and the JSON are
built once, at the digest, without the general encoder.
"""
import json

#: what a compact move holds, in order; ``cause`` is the text or a (format, *args) tuple not yet
#: formatted, ``isr`` the leader's ISR list at the move
HW_FIELDS = ("t_ms", "topic", "partition", "broker", "hw_before", "hw", "leader_epoch", "cause", "isr")

_json_text = json.encoder.encode_basestring   # a str as JSON (non-ASCII kept: ensure_ascii off)


def hw_reason(cause, isr, hw):
    """The move's reason (``docs/model.md`` §5.1: the HW is the minimum LEO of the leader, the ISR
    and the followers caught up within replica.lag.time.max.ms)."""
    if cause.__class__ is tuple:
        cause = cause[0] % cause[1:]
    return f"{cause}: min LEO over the leader, the ISR {isr} and caught-up followers is {hw}"


def hw_event(t_ms, topic, partition, broker, hw_before, hw, leader_epoch, cause, isr):
    """The ``high_watermark`` history event (its key order is part of the digest's bytes)."""
    return {"t_ms": t_ms, "type": "high_watermark", "topic": topic, "partition": partition,
            "broker": broker, "hw_before": hw_before, "hw": hw, "leader_epoch": leader_epoch,
            "reason": hw_reason(cause, isr, hw)}


def expand(event):
    """A history entry as the event dict it stands for (a dict is returned as it is)."""
    return hw_event(*event) if event.__class__ is tuple else event


def hw_json(move):
    """``compact_json(expand(move))``, built directly: the numbers are plain ints (checked; else
    the general encoder writes it)."""
    t_ms, topic, partition, broker, hw_before, hw, leader_epoch, cause, isr = move
    if not (t_ms.__class__ is partition.__class__ is broker.__class__ is hw_before.__class__
            is hw.__class__ is leader_epoch.__class__ is int):
        return None
    return (f'{{"t_ms":{t_ms},"type":"high_watermark","topic":{_json_text(topic)},'
            f'"partition":{partition},"broker":{broker},"hw_before":{hw_before},"hw":{hw},'
            f'"leader_epoch":{leader_epoch},"reason":{_json_text(hw_reason(cause, isr, hw))}}}')

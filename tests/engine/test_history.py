"""Compact high-watermark moves (engine/history.py): a sweep run's history digests to exactly the
full history's bytes, and each tuple expands to exactly the event dict it stands for."""
import hashlib

import pytest

from engine.history import HW_FIELDS, expand, hw_json
from engine.result import compact_json, history_digest
from engine.scenario.library import library
from engine.simulation import Simulation

from .randomized import ZK_VERSIONS, random_scenario


def _both(scenario):
    full = Simulation(scenario).run(logs=False)["history"]
    compact = Simulation(scenario, compact_history=True).run(logs=False)["history"]
    return full, compact


def _check_same_run(scenario):
    full, compact = _both(scenario)
    moves = [e for e in compact if e.__class__ is tuple]
    # the compact run holds its moves as tuples, and as many as the full run has HW events
    assert len(moves) == sum(1 for e in full if e["type"] == "high_watermark") > 0
    assert [expand(e) for e in compact] == full
    assert history_digest(compact) == history_digest(full)
    return len(moves)


@pytest.mark.parametrize("version", ZK_VERSIONS)
def test_a_compact_history_is_the_full_one_in_every_zookeeper_era(version):
    scenario = random_scenario(7, duration_ms=15000, era=version)
    assert _check_same_run(scenario) > 20


@pytest.mark.parametrize("name", ["unclean-election-loss", "kip101-scenario-2-v2.6", "controller-failover-kraft",
                                  "last-isr-member-elr"])
def test_a_compact_history_is_the_full_one_through_crashes_and_elections(name):
    # ISR shrink and expansion, truncation, new leaders; KRaft's quorum and ELR
    assert _check_same_run(library()[name]) > 2


def test_a_trace_keeps_the_full_history():
    events = []
    scenario = random_scenario(3, duration_ms=5000)
    sim = Simulation(scenario, trace=events.append, compact_history=True)
    history = sim.run(logs=False)["history"]
    assert all(e.__class__ is dict for e in history) and events == history


def test_the_moves_text_is_the_encoders_even_for_odd_topic_names():
    for topic in ('or"ders\\', "zé-ß", "tab\there"):
        move = (1200, topic, 2, 1, 40, 57, 3, ("follower %s fetched at offset %s", 2, 57), [1, 2])
        # the direct text against the general encoder's text of the expanded dict
        assert hw_json(move) == compact_json(expand(move))
    event = expand(move)
    fields = dict(zip(HW_FIELDS, move))
    assert {k: event[k] for k in HW_FIELDS[:7]} == {k: fields[k] for k in HW_FIELDS[:7]}
    assert event["reason"] == ("follower 2 fetched at offset 57: min LEO over the leader, the ISR [1, 2] "
                               "and caught-up followers is 57")
    assert list(event) == ["t_ms", "type", "topic", "partition", "broker", "hw_before", "hw",
                           "leader_epoch", "reason"]


def test_a_move_with_a_number_that_is_not_an_int_falls_back_to_the_encoder():
    move = (True, "t", 0, 1, 0, 5, 0, "became leader", [1])
    assert hw_json(move) is None
    text = ('{"t_ms":true,"type":"high_watermark","topic":"t","partition":0,"broker":1,"hw_before":0,'
            '"hw":5,"leader_epoch":0,"reason":"became leader: min LEO over the leader, the ISR [1] and '
            'caught-up followers is 5"}\n')
    assert history_digest([move]) == hashlib.sha256(text.encode()).hexdigest()

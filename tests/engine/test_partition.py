"""The pure ISR / HW / truncation rules (docs/model.md §2.2, §3, §5.1, §8.1), with its
numbers, plus exhaustive sweeps of small domains checked against the rules as docs/model.md
states them."""
import itertools

import pytest

from engine.eras import ERAS
from engine.server.log import UNDEFINED, ReplicaLog
from engine.server.partition import (NEVER_MS, RemoteReplica, can_join_isr, candidate_high_watermark,
                              is_out_of_sync, kip101_truncation_offset, kip279_truncation,
                              update_fetch_state)

V010, V11, V20, V24, V26 = (ERAS[v] for v in ("0.10", "1.1", "2.0", "2.4", "2.6"))


def remote(leo=UNDEFINED, caught=NEVER_MS, prev_leo=UNDEFINED, prev_t=NEVER_MS):
    r = RemoteReplica()
    r.leo, r.last_caught_up_ms, r.last_fetch_leader_leo, r.last_fetch_time_ms = leo, caught, prev_leo, prev_t
    return r


# -- §2.2 the KAFKA-4485 lastCaughtUpTimeMs rule --------------------------------------------------
def test_fetch_reaching_the_leader_leo_is_caught_up_now():
    r = remote(caught=100, prev_leo=50, prev_t=900)
    update_fetch_state(r, fetch_offset=60, leader_leo=60, now_ms=1000)
    assert (r.last_caught_up_ms, r.last_fetch_leader_leo, r.last_fetch_time_ms, r.leo) == (1000, 60, 1000, 60)


def test_fetch_reaching_the_previous_leader_leo_is_caught_up_as_of_the_previous_fetch():
    # A constant stream of produces: the follower is always one batch behind the current LEO
    # but has what the leader had at its previous fetch -> caught up at prevT (no flapping).
    r = remote(caught=100, prev_leo=50, prev_t=900)
    update_fetch_state(r, fetch_offset=55, leader_leo=60, now_ms=1000)
    assert r.last_caught_up_ms == 900
    assert (r.last_fetch_leader_leo, r.last_fetch_time_ms) == (60, 1000)


def test_fetch_behind_both_leos_does_not_move_last_caught_up():
    r = remote(caught=100, prev_leo=50, prev_t=900)
    update_fetch_state(r, fetch_offset=40, leader_leo=60, now_ms=1000)
    assert r.last_caught_up_ms == 100


def test_last_caught_up_never_goes_backwards_exhaustive():
    for caught, prev_t, offset, leo, prev_leo in itertools.product(
            (0, 500, 1000), (0, 400, 900), range(0, 4), range(0, 4), range(-1, 4)):
        r = remote(caught=caught, prev_leo=prev_leo, prev_t=prev_t)
        update_fetch_state(r, offset, leo, 1000)
        expected = caught
        if offset >= leo:
            expected = max(caught, 1000)
        elif offset >= prev_leo:
            expected = max(caught, prev_t)
        assert r.last_caught_up_ms == expected
        assert r.last_fetch_leader_leo == leo and r.last_fetch_time_ms == 1000 and r.leo == offset


# -- §2.2 out-of-sync test per era ------------------------------------------------------------------
@pytest.mark.parametrize("era", [V010, V11, V20])
def test_before_2_1_time_alone_decides(era):
    r = remote(leo=60, caught=0)
    assert is_out_of_sync(r, 60, 10001, 10000, era)       # even at the leader's LEO
    assert not is_out_of_sync(r, 60, 10000, 10000, era)   # exactly the lag is still in sync


@pytest.mark.parametrize("era", [V24, V26])
def test_from_2_1_a_follower_at_the_leader_leo_is_never_out_of_sync(era):
    assert not is_out_of_sync(remote(leo=60, caught=0), 60, 99999, 30000, era)
    assert is_out_of_sync(remote(leo=59, caught=0), 60, 30001, 30000, era)
    assert not is_out_of_sync(remote(leo=59, caught=0), 60, 30000, 30000, era)


def test_out_of_sync_exhaustive():
    for era, caught, now, follower_leo in itertools.product(
            (V010, V26), (0, 5000), (9999, 10000, 10001, 15001), (59, 60)):
        expected = now - caught > 10000
        if era.out_of_sync_needs_leo_behind and follower_leo == 60:
            expected = False
        assert is_out_of_sync(remote(leo=follower_leo, caught=caught), 60, now, 10000, era) == expected


# -- §3 ISR expansion --------------------------------------------------------------------------------
def test_join_needs_the_hw_not_the_leo():
    assert can_join_isr(remote(leo=100), leader_hw=100, epoch_start_offset=0, era=V26)
    assert not can_join_isr(remote(leo=99), leader_hw=100, epoch_start_offset=0, era=V26)


def test_kafka_7128_join_also_needs_the_epoch_start_offset_from_2_1():
    # New leader with a lagging HW 90 and epoch start offset 100 (its LEO when elected).
    r = remote(leo=95)
    assert can_join_isr(r, leader_hw=90, epoch_start_offset=100, era=V20)
    assert not can_join_isr(r, leader_hw=90, epoch_start_offset=100, era=V24)
    assert can_join_isr(remote(leo=100), leader_hw=90, epoch_start_offset=100, era=V24)


# -- §5.1 leader HW -------------------------------------------------------------------------------------
def test_hw_is_min_leo_over_leader_isr_and_caught_up_followers():
    remotes = {2: remote(leo=8, caught=1000), 3: remote(leo=5, caught=0)}
    # 3 is out of the ISR and not caught up within the lag: it does not hold the HW back.
    assert candidate_high_watermark(1, 10, [1, 2], remotes, 20000, 10000) == 8
    # Caught up within the lag although not in the ISR (0.10.2+ nuance): it counts.
    remotes[3].last_caught_up_ms = 15000
    assert candidate_high_watermark(1, 10, [1, 2], remotes, 20000, 10000) == 5


def test_an_isr_member_with_unknown_leo_freezes_the_hw():
    # A new leader: remote LEOs reset to -1 until each follower fetched once (§5.1).
    remotes = {2: remote(leo=UNDEFINED, caught=20000)}
    assert candidate_high_watermark(1, 10, [1, 2], remotes, 20000, 10000) == UNDEFINED


def test_isr_of_the_leader_alone_puts_the_hw_at_the_leo():
    assert candidate_high_watermark(1, 42, [1], {2: remote(leo=3)}, 99999, 10000) == 42


# -- §8.1 truncation ---------------------------------------------------------------------------------------
def test_kip101_truncation_rules():
    assert kip101_truncation_offset(UNDEFINED, leo=10, hw=7) == 7   # fall back to HW
    assert kip101_truncation_offset(12, leo=10, hw=7) == 10         # leader has more: no-op
    assert kip101_truncation_offset(8, leo=10, hw=7) == 8


def own_lookup(entries, leo, era):
    log = ReplicaLog()
    log.epoch_cache = [list(e) for e in entries]
    log.leo = leo
    return lambda epoch: log.end_offset_for(epoch, era)


def test_kip279_scenario_of_the_reference_8_4():
    # B: [m1, m3], cache {1:0, 2:1}, LEO 2; A answers for B's epoch 2 with (1, 2).
    b = own_lookup([[1, 0], [2, 1]], 2, V26)
    assert kip279_truncation(1, 2, leo=2, hw=1, own_end_offset_for=b) == (1, True)


def test_kip279_iterates_when_the_follower_never_saw_that_epoch():
    # Follower cache {0:0, 3:10}, LEO 15; leader answers (epoch 2, end 12): the follower has no
    # epoch 2, so it truncates to the end of its nearest epoch (0 -> 10) and asks again.
    f = own_lookup([[0, 0], [3, 10]], 15, V26)
    assert kip279_truncation(2, 12, leo=15, hw=5, own_end_offset_for=f) == (10, False)


def test_kip279_undefined_answers():
    f = own_lookup([[0, 0]], 4, V26)
    assert kip279_truncation(UNDEFINED, UNDEFINED, leo=4, hw=3, own_end_offset_for=f) == (3, True)
    assert kip279_truncation(UNDEFINED, 2, leo=4, hw=3, own_end_offset_for=f) == (2, True)

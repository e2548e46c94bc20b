"""The replica log and its leader-epoch cache (docs/model.md §1.3)."""
from engine.eras import ERAS
from engine.server.log import UNDEFINED, ReplicaLog, end_offset_for

V010, V11, V20, V24, V26 = (ERAS[v] for v in ("0.10", "1.1", "2.0", "2.4", "2.6"))


def log_with(entries):
    """entries: list of (epoch, count) appended as leader."""
    log = ReplicaLog()
    n = 0
    for epoch, count in entries:
        log.append(epoch, [f"m{n + i}" for i in range(count)], True)
        n += count
    return log


def test_leo_is_next_offset_and_append_returns_base_offset():
    log = ReplicaLog()
    assert log.leo == 0
    assert log.append(0, ["a", "b", "c"], True) == 0
    assert log.append(0, ["d"], True) == 3
    assert log.leo == 4
    assert log.record_at(3) == (0, "d")
    assert log.record_at(4) is None


def test_epoch_cache_records_first_offset_of_each_epoch():
    log = log_with([(0, 3), (2, 2), (5, 1)])
    assert log.epoch_cache == [[0, 0], [2, 3], [5, 5]]
    assert log.latest_epoch() == 5


def test_assign_drops_tail_entries_with_larger_epoch_or_offset():
    log = log_with([(0, 3), (2, 2)])
    log.assign_epoch(1, 2)           # epoch 2 (>= 1) and start 3 (>= 2) go
    assert log.epoch_cache == [[0, 0], [1, 2]]
    log.assign_epoch(1, 5)           # same epoch, larger start: ignored
    assert log.epoch_cache == [[0, 0], [1, 2]]


def test_truncation_removes_records_and_epoch_entries_and_clamps_hw():
    log = log_with([(0, 3), (2, 2), (5, 1)])
    log.hw = 6
    log.flush()
    assert log.truncate_to(3) == 3
    assert log.leo == 3 and log.hw == 3 and log.flushed_offset == 3
    assert log.epoch_cache == [[0, 0]]
    assert log.truncate_to(10) == 0 and log.leo == 3


def test_follower_append_keeps_leader_epochs():
    leader = log_with([(0, 2), (3, 2)])
    follower = ReplicaLog()
    follower.append_replicated(leader.read(0, 10), True)
    assert follower.records == leader.records
    assert follower.epoch_cache == [[0, 0], [3, 2]]


def test_end_offset_for_2_1_semantics():
    # cache {1: 0, 3: 2}, LEO 5 (as §8.4 step 3, A after appending m4..)
    cache = [[1, 0], [3, 2]]
    assert end_offset_for(cache, UNDEFINED, 5, V26) == (UNDEFINED, UNDEFINED)
    assert end_offset_for(cache, 3, 5, V26) == (3, 5)          # latest epoch -> LEO
    assert end_offset_for(cache, 4, 5, V26) == (UNDEFINED, UNDEFINED)  # newer than ours
    assert end_offset_for(cache, 2, 5, V26) == (1, 2)          # largest <= 2 is 1; next starts at 2
    assert end_offset_for(cache, 0, 5, V26) == (0, 0)          # below first (KAFKA-7415)


def test_end_offset_for_kip101_answers_only_an_offset():
    cache = [[1, 0], [3, 2]]
    assert end_offset_for(cache, 2, 5, V11) == (UNDEFINED, 2)
    assert end_offset_for(cache, 3, 5, V11) == (UNDEFINED, 5)
    assert end_offset_for(cache, 0, 5, V11) == (UNDEFINED, UNDEFINED)


def test_end_offset_for_2_0_returns_epoch_but_not_the_below_first_rule():
    cache = [[1, 0], [3, 2]]
    assert end_offset_for(cache, 2, 5, V20) == (1, 2)
    assert end_offset_for(cache, 0, 5, V20) == (UNDEFINED, UNDEFINED)
    assert end_offset_for(cache, 0, 5, V24) == (0, 0)


def test_writeback_makes_old_pages_durable_only():
    log = ReplicaLog()
    log.append(0, ["a", "b"], True)
    log.writeback(0, 30000)          # mark (0, 2)
    log.append(0, ["c"], True)
    log.writeback(5000, 30000)       # mark (5000, 3)
    assert log.flushed_offset == 0
    log.writeback(30000, 30000)      # pages dirtied at t=0 are 30 s old: written back
    assert log.flushed_offset == 2
    log.writeback(35000, 30000)
    assert log.flushed_offset == 3


def test_epoch_runs_follow_appends_and_truncation():
    log = log_with([(0, 3), (2, 2)])
    assert log.runs == [[0, 3, 0], [3, 5, 2]]
    follower = ReplicaLog()
    follower.append_replicated(log.read(0, 10), False)
    assert follower.runs == log.runs
    log.truncate_to(4)
    assert log.runs == [[0, 3, 0], [3, 4, 2]]
    log.truncate_to(2)
    assert log.runs == [[0, 2, 0]]
    log.append(5, ["x"], True)
    assert log.runs == [[0, 2, 0], [2, 3, 5]]

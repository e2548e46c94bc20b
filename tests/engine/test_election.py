"""Controller decisions (docs/model.md §9.3 typical outcomes, §9.7, §9.8)."""
from engine.controller.election import (controlled_shutdown_election, imbalanced_partitions, offline_election,
                             preferred_election, remove_replica_from_isr)

AR = [1, 2, 3]


def test_leader_dies_next_in_assignment_order_that_is_live_and_in_isr():
    assert offline_election(AR, [1, 2, 3], {2, 3}, False) == (2, [2, 3], "clean")


def test_election_follows_assignment_order_not_isr_order():
    assert offline_election(AR, [3, 2], {2, 3}, False) == (2, [3, 2], "clean")


def test_last_isr_member_dead_and_unclean_disabled_no_leader():
    assert offline_election(AR, [2], {3}, False) is None


def test_unclean_picks_first_live_replica_with_isr_of_itself():
    assert offline_election(AR, [2], {3}, True) == (3, [3], "unclean")


def test_no_live_replica_at_all():
    assert offline_election(AR, [1], set(), True) is None


def test_follower_dies_removed_leader_kept():
    assert remove_replica_from_isr(1, [1, 2, 3], 3, True, False) == (1, [1, 2])


def test_leader_removed_leaves_no_leader():
    assert remove_replica_from_isr(1, [1, 2], 1, True, False) == (-1, [2])


def test_last_isr_member_is_kept_from_1_1():
    assert remove_replica_from_isr(2, [2], 2, True, True) == (-1, [2])


def test_before_1_1_last_member_kept_only_with_unclean_disabled():
    assert remove_replica_from_isr(2, [2], 2, False, False) == (-1, [2])
    assert remove_replica_from_isr(2, [2], 2, False, True) == (-1, [])


def test_replica_not_in_isr_changes_nothing():
    assert remove_replica_from_isr(1, [1, 2], 3, True, False) is None


def test_controlled_shutdown_skips_shutting_down_brokers():
    assert controlled_shutdown_election(AR, [1, 2, 3], {1, 2, 3}, {1}) == (2, [2, 3], "controlled_shutdown")
    assert controlled_shutdown_election(AR, [1], {1, 2, 3}, {1}) is None


def test_preferred_only_when_preferred_is_live_in_isr_and_not_leader():
    assert preferred_election(AR, [2, 3, 1], {1, 2, 3}, 2) == (1, [2, 3, 1], "preferred")
    assert preferred_election(AR, [2, 3], {1, 2, 3}, 2) is None
    assert preferred_election(AR, [1, 2, 3], {1, 2, 3}, 1) is None


def test_imbalance_threshold_is_strictly_above_the_percentage():
    assignments = {f"t-{i}": [1, 2, 3] for i in range(10)}
    leaders = {k: 1 for k in assignments}
    leaders["t-0"] = 2                         # 1 of 10 = 10%: not above 10%
    isrs = {k: [1, 2, 3] for k in assignments}
    assert imbalanced_partitions(assignments, leaders, {1, 2, 3}, isrs, 10) == []
    leaders["t-1"] = 2                         # 20% > 10%
    assert imbalanced_partitions(assignments, leaders, {1, 2, 3}, isrs, 10) == ["t-0", "t-1"]

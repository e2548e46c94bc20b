"""Controller decisions as pure functions (§9.3, §9.7, §9.8). Each takes the partition's
assignment (AR, in order), its current ISR and the live/shutting-down brokers, and returns the
new (leader, isr) or None. Election order is always AR order, never ISR order (§15.2 item 9)."""


def offline_election(assignment, isr, live, unclean_enabled):
    """OfflinePartitionLeaderElectionStrategy: first AR replica that is live and in the ISR; the
    new ISR is the live ISR in ISR order. Else, if unclean election is enabled, the first live
    AR replica with ISR = [it]. Returns (leader, isr, kind) or None."""
    live_isr = [r for r in isr if r in live]
    for replica in assignment:
        if replica in live and replica in isr:
            return replica, live_isr, "clean"
    if unclean_enabled:
        for replica in assignment:
            if replica in live:
                return replica, [replica], "unclean"
    return None


def controlled_shutdown_election(assignment, isr, live, shutting_down):
    """ControlledShutdownPartitionLeaderElectionStrategy (§9.8)."""
    new_isr = [r for r in isr if r not in shutting_down]
    for replica in assignment:
        if replica in live and replica in isr and replica not in shutting_down:
            return replica, new_isr, "controlled_shutdown"
    return None


def preferred_election(assignment, isr, live, current_leader):
    """PreferredReplicaPartitionLeaderElectionStrategy: AR[0] iff live and in ISR; ISR kept."""
    preferred = assignment[0]
    if preferred != current_leader and preferred in live and preferred in isr:
        return preferred, list(isr), "preferred"
    return None


def remove_replica_from_isr(leader, isr, replica, keep_last_member, unclean_enabled):
    """OfflineReplica handling (§9.3 step 3): drop ``replica`` from the ISR, leader -1 if it led.
    When it is the only ISR member, 1.1+ keeps it; <= 1.0 keeps it only with unclean election
    disabled. Returns (leader, isr) or None when nothing changes."""
    if replica not in isr:
        return None
    new_leader = -1 if leader == replica else leader
    if isr == [replica] and (keep_last_member or not unclean_enabled):
        new_isr = list(isr)
    else:
        new_isr = [r for r in isr if r != replica]
    if new_leader == leader and new_isr == isr:
        return None
    return new_leader, new_isr


def imbalanced_partitions(assignments, leaders, live, isrs, percentage):
    """checkAndTriggerAutoLeaderRebalance (§9.7): for each preferred broker whose share of
    partitions led by someone else exceeds leader.imbalance.per.broker.percentage, the partitions
    whose preferred replica is live and in the ISR. ``assignments`` maps key -> AR."""
    by_preferred = {}
    for key, assignment in assignments.items():
        by_preferred.setdefault(assignment[0], []).append(key)
    chosen = []
    for broker in sorted(by_preferred):
        keys = by_preferred[broker]
        not_led = [k for k in keys if leaders.get(k) != broker]
        if keys and len(not_led) / len(keys) > percentage / 100:
            chosen.extend(k for k in not_led if broker in live and broker in isrs.get(k, ()))
    return chosen

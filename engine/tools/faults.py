"""Random fault schedules drawn from a seed: the fault profile of sweeps and searches.

A *fault profile* gives, per fault kind, a rate (expected occurrences per simulated minute) and a
duration range. ``fault_timeline(scenario, profile, seed)`` turns it into timeline operations for
a *fault phase* (``[start_ms, fault_end_ms)``), then a *healing phase*: at ``fault_end_ms`` every
link is healed, paused brokers resume and stopped brokers restart — staggered past their
ZooKeeper session timeout, so each restart can register — and the cluster must converge by the
end of the run. The schedule only ever contains operations that make sense at their time
(the scenario validator checks it again).

KRaft eras (docs/model.md §20, docs/scenario-format.md §4.2) have no ZooKeeper: ``isolate_zk``
cuts a broker from the controller quorum instead (it keeps serving clients and peers until the
controller fences it), ``expire_session`` has no equivalent and is never drawn, ZooKeeper's side
of a ``partition`` is the quorum's, and ``controller`` faults crash, pause or isolate one voter at
a time — a minority, so the quorum keeps a majority and the faults test how the cluster rides out
a controller failover, not a lost quorum (a scenario's own timeline can still lose it).
ZooKeeper-era schedules are unchanged: the controller kind is not even drawn there.

Racks (docs/model.md §21.5): ``zone`` fails a whole rack at once — it crashes every broker of the
rack (and, in KRaft eras, its dedicated controllers), or cuts the rack off from every node outside
it until a heal of that rack. It is drawn only when some broker has a rack (so every other schedule
is unchanged), only when every node of the rack is free, and in KRaft eras only when the faulted
voters stay a minority.
"""
from engine.core.rng import Streams
from engine.scenario.racks import rack_of

#: kind -> (events per simulated minute, min duration ms, max duration ms)
DEFAULT_PROFILE = {
    "crash_process": (1.0, 2000, 30000),
    "crash_power": (0.3, 2000, 30000),
    "pause": (0.5, 1000, 25000),
    "partition": (0.4, 2000, 30000),
    "cut": (0.4, 2000, 20000),
    "isolate_zk": (0.3, 2000, 30000),
    "expire_session": (0.2, 0, 0),
    "slow": (0.3, 2000, 20000),
    "controller": (0.3, 2000, 30000),
    "zone": (0.2, 5000, 30000),
}
KINDS = tuple(DEFAULT_PROFILE)
#: Kinds drawn only where they exist: ZooKeeper sessions, KRaft controller voters.
ZK_ONLY_KINDS = ("expire_session",)
KRAFT_ONLY_KINDS = ("controller",)
#: Kinds drawn only when some broker has a rack (docs/model.md §21.5).
RACK_ONLY_KINDS = ("zone",)
CONTROLLER_FAULTS = ("crash", "pause", "isolate")
SLOW_LATENCY_MS = (50, 2000)


def normalise_profile(profile):
    """Fill a partial profile from the default; rates >= 0, durations ordered."""
    out = dict(DEFAULT_PROFILE)
    for kind, value in (profile or {}).items():
        if kind not in DEFAULT_PROFILE:
            raise ValueError(f"unknown fault kind {kind!r} (allowed: {', '.join(KINDS)})")
        rate, lo, hi = value
        if rate < 0 or lo < 0 or hi < lo:
            raise ValueError(f"fault {kind}: rate >= 0 and 0 <= min <= max duration required")
        out[kind] = (float(rate), int(lo), int(hi))
    return out


def is_kraft(scenario):
    """A loaded KRaft scenario names its controller voters; a ZooKeeper one has no such key."""
    return scenario.get("controllers") is not None


def session_timeout(scenario):
    """The session after which a stopped broker's registration lapses: ZooKeeper's session in
    ZooKeeper mode, the controller's broker session (broker.session.timeout.ms) in KRaft."""
    from engine.eras import default
    key = "broker.session.timeout.ms" if is_kraft(scenario) else "zookeeper.session.timeout.ms"
    value = scenario.get("config", {}).get(key)
    return value if value is not None else default(scenario["kafka_version"], key)


class _State:
    def __init__(self, brokers, voters=()):
        self.busy_until = {b: 0 for b in brokers}   # a broker has one fault at a time
        self.stopped = {}                           # broker -> restart time planned
        self.links_busy_until = 0
        self.metadata_node = "zk"                   # ZooKeeper, or "controllers" in KRaft
        self.voters = list(voters)
        self.voter_busy_until = {v: 0 for v in voters}
        self.voters_stopped = set()


def fault_timeline(scenario, profile=None, seed=0, start_ms=1000, fault_end_ms=None,
                   session_timeout_ms=None, nodes=None):
    """Operations for the fault phase and the healing phase (sorted by time)."""
    profile = normalise_profile(profile)
    rng = Streams(seed).fork("faults")
    brokers = list(scenario["brokers"])
    duration = scenario["duration_ms"]
    fault_end_ms = fault_end_ms if fault_end_ms is not None else duration * 2 // 3
    session = session_timeout_ms or 18000
    kraft = is_kraft(scenario)
    state = _State(brokers, scenario["controllers"] if kraft else ())
    if kraft:
        state.metadata_node = "controllers"
    nodes = nodes or (brokers + [state.metadata_node])
    skipped = ZK_ONLY_KINDS if kraft else KRAFT_ONLY_KINDS
    racks = broker_racks(scenario)
    if not racks:
        skipped += RACK_ONLY_KINDS
    ops = []
    # Draw each kind's event times as a Poisson process over the fault phase.
    draws = []
    minutes = max(fault_end_ms - start_ms, 0) / 60000
    for kind in KINDS:
        if kind in skipped:
            continue
        rate, lo, hi = profile[kind]
        count = _poisson(rng, rate * minutes)
        for _ in range(count):
            at = rng.randint(start_ms, max(start_ms, fault_end_ms - 1))
            draws.append((at, kind, rng.randint(lo, hi) if hi else 0, rng.random()))
    draws.sort()
    for at, kind, length, pick in draws:
        if kind == "zone":
            _place_zone(ops, state, at, min(at + length, fault_end_ms), pick, fault_end_ms, racks)
            continue
        _place(ops, state, kind, at, length, pick, brokers, nodes, fault_end_ms, rng)
    ops.extend(_healing(state, brokers, fault_end_ms, session))
    ops.sort(key=lambda op: op["at_ms"])
    return [op for op in ops if op["at_ms"] <= duration]


def broker_racks(scenario):
    """{node id: rack} of a loaded scenario's nodes, when at least one broker has a rack; else {}."""
    racks = rack_of(scenario)
    return racks if any(b in racks for b in scenario["brokers"]) else {}


def _place_zone(ops, state, at, end, pick, fault_end_ms, racks):
    """A zone outage: one rack's brokers (and controllers) crash, or the rack is isolated until
    ``end``; skipped unless every node of the rack is free and the faulted voters stay a minority."""
    names = sorted({rack for node, rack in racks.items() if node in state.busy_until})
    scaled = pick * len(names)
    rack = names[int(scaled)]
    isolate = scaled - int(scaled) >= 0.5
    members = sorted(node for node, name in racks.items() if name == rack)
    brokers = [n for n in members if n in state.busy_until]
    voters = [n for n in members if n in state.voter_busy_until]
    if any(state.busy_until[b] > at or b in state.stopped for b in brokers):
        return
    busy = [v for v in state.voters if state.voter_busy_until[v] > at or v in state.voters_stopped]
    if voters and (set(voters) & set(busy) or len(busy) + len(voters) > (len(state.voters) - 1) // 2):
        return
    if not isolate:
        ops.append({"at_ms": at, "op": "crash", "rack": rack, "mode": "process"})
        for b in brokers:
            state.stopped[b] = None
            state.busy_until[b] = fault_end_ms
        state.voters_stopped.update(voters)
        for v in voters:
            state.voter_busy_until[v] = fault_end_ms
        return
    if state.links_busy_until > at:
        return
    ops.append({"at_ms": at, "op": "isolate", "rack": rack, "from": "all"})
    ops.append({"at_ms": end, "op": "heal", "rack": rack})
    state.links_busy_until = end + 1
    for node in brokers:
        state.busy_until[node] = end + 1
    for v in voters:
        state.voter_busy_until[v] = end + 1


def _poisson(rng, mean):
    # Knuth's method is fine for the small means of a fault phase.
    if mean <= 0:
        return 0
    limit, k, p = pow(2.718281828459045, -mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _free_broker(state, brokers, at, pick):
    free = [b for b in brokers if state.busy_until[b] <= at and b not in state.stopped]
    return free[int(pick * len(free))] if free else None


def _place(ops, state, kind, at, length, pick, brokers, nodes, fault_end_ms, rng):
    end = min(at + length, fault_end_ms)
    if kind == "controller":
        _place_controller(ops, state, at, end, pick, fault_end_ms)
        return
    if kind in ("crash_process", "crash_power", "pause", "isolate_zk", "expire_session"):
        broker = _free_broker(state, brokers, at, pick)
        if broker is None:
            return
        if kind.startswith("crash"):
            ops.append({"at_ms": at, "op": "crash", "broker": broker,
                        "mode": "power" if kind == "crash_power" else "process"})
            state.stopped[broker] = None
            state.busy_until[broker] = fault_end_ms
            return
        if kind == "pause":
            ops.append({"at_ms": at, "op": "pause", "broker": broker, "for_ms": max(end - at, 1)})
        elif kind == "isolate_zk":
            ops.append({"at_ms": at, "op": "isolate", "broker": broker, "from": state.metadata_node})
            ops.append({"at_ms": end, "op": "heal", "from": broker, "to": state.metadata_node})
        else:
            ops.append({"at_ms": at, "op": "expire_session", "broker": broker})
        state.busy_until[broker] = end + 1
        return
    if state.links_busy_until > at:
        return
    if kind == "partition":
        if len(brokers) < 2:
            return
        shuffled = list(brokers)
        rng.shuffle(shuffled)
        cut = rng.randint(1, len(shuffled) - 1)
        minority, majority = shuffled[:cut], shuffled[cut:]
        # ZooKeeper sides with one group at random; clients are left in the last (unlisted) group
        meta = state.metadata_node
        groups = [minority + [meta], majority] if rng.random() < 0.5 else [minority, majority + [meta]]
        ops.append({"at_ms": at, "op": "partition", "groups": groups})
    elif kind == "cut":
        a = rng.choice(brokers)
        b = rng.choice([n for n in nodes if n != a])
        ops.append({"at_ms": at, "op": "cut", "from": a, "to": b})
    else:  # slow
        if len(brokers) < 2:
            return
        a = rng.choice(brokers)
        b = rng.choice([n for n in brokers if n != a])
        latency = rng.randint(*SLOW_LATENCY_MS)
        ops.append({"at_ms": at, "op": "slow", "from": a, "to": b, "latency_ms": latency})
    ops.append({"at_ms": end, "op": "heal"})
    state.links_busy_until = end + 1


def _place_controller(ops, state, at, end, pick, fault_end_ms):
    """Crash, pause or isolate one free voter, keeping the faulted voters a minority."""
    busy = [v for v in state.voters if state.voter_busy_until[v] > at or v in state.voters_stopped]
    free = [v for v in state.voters if v not in busy]
    if not free or len(busy) + 1 > (len(state.voters) - 1) // 2:
        return
    scaled = pick * len(free)
    voter = free[int(scaled)]
    action = CONTROLLER_FAULTS[int((scaled - int(scaled)) * len(CONTROLLER_FAULTS))]
    if action == "crash":
        ops.append({"at_ms": at, "op": "crash", "controller": voter, "mode": "process"})
        state.voters_stopped.add(voter)
        state.voter_busy_until[voter] = fault_end_ms
        return
    if action == "pause":
        ops.append({"at_ms": at, "op": "pause", "controller": voter, "for_ms": max(end - at, 1)})
    else:
        # healed by a full heal, like partition and cut, so it takes the link-fault slot
        if state.links_busy_until > at:
            return
        ops.append({"at_ms": at, "op": "isolate", "controller": voter, "from": "all"})
        ops.append({"at_ms": end, "op": "heal"})
        state.links_busy_until = end + 1
    state.voter_busy_until[voter] = end + 1


def _healing(state, brokers, fault_end_ms, session_timeout_ms):
    """Heal every link, restart every crashed voter at once (a voter has no session to wait
    out), then restart every stopped broker once its old session has expired."""
    ops = [{"at_ms": fault_end_ms, "op": "heal"}]
    for i, voter in enumerate(sorted(state.voters_stopped)):
        ops.append({"at_ms": fault_end_ms + 100 * i, "op": "restart", "controller": voter})
    restart_at = fault_end_ms + session_timeout_ms + 500
    for i, broker in enumerate(sorted(state.stopped)):
        ops.append({"at_ms": restart_at + 200 * i, "op": "restart", "broker": broker})
    return ops

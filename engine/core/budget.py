"""How much work a scenario is, before it runs, and a hard cap while it runs.

Every server surface that simulates (a live room, a saved run, an import, a link, a fork, a
search or sweep run) checks ``estimate(scenario)`` against its budget before any work starts, and
runs the simulation under a ``Cap`` so that a run the estimate misjudged still stops.

The unit is the scheduler event (a message delivered, a timer fired), what the engine's cost is
proportional to. The estimate is a linear model of events per simulated second, fitted on the 18
library scenarios, 40 seeded random scenarios and the bench-medium workload (5 brokers, 30
partitions RF 3, 1,000 records/s) and then rounded up so that it rarely underestimates:

* every produced record costs about 4 events: the produce request and its answer, and the fetches
  that carry it to the followers (batched per partition, so replication adds little per record);
* every follower replica costs about 4 events a second while idle: its long-poll fetch
  (``replica.fetch.wait.max.ms`` 500) and the answer, twice a second;
* every broker costs about 12 events a second: ZooKeeper pings, the ISR tasks, metadata;
* a ``produce`` operation of the timeline costs about 5 events per record;
* KRaft eras (docs/model.md §20) add every controller voter, about 9.5 events a second (Raft
  fetches to the leader, long-polled, and their answers; the leader's NoOp records), and every
  broker about 6 more (a heartbeat every ``broker.heartbeat.interval.ms`` and its answer, and its
  long-polled metadata fetch), in place of ZooKeeper's pings. Measured on idle clusters of 1-6
  brokers and 1-5 voters (36-81 events/s) and with 3 x 100 records/s; ZooKeeper-era estimates
  are unchanged.

``tests/engine/test_budget.py`` checks that actual events stay within 0.2x-1.5x of the estimate.
"""
from engine.eras import KRAFT_VERSIONS
from engine.kraft.kraft_scenario import DEFAULT_CONTROLLERS


EVENTS_PER_RECORD = 4.2
EVENTS_PER_FOLLOWER_S = 4.1
EVENTS_PER_BROKER_S = 11.7
EVENTS_PER_PRODUCED_RECORD = 5.0
EVENTS_PER_VOTER_S = 9.5
EVENTS_PER_KRAFT_BROKER_S = 6.0
HEADROOM = 1.3                     # rounded up: underestimating is what a budget must not do
#: the hard cap of a run is this many times its surface's budget (the estimate can be low)
CAP_FACTOR = 2.0


def _voter_count(doc):
    """Controller voters of a KRaft scenario (three by default, scenario-format §4.2); 0 in
    ZooKeeper eras."""
    if doc.get("kafka_version") not in KRAFT_VERSIONS:
        return 0
    voters = doc.get("controllers")
    return len(voters) if isinstance(voters, list) else len(DEFAULT_CONTROLLERS)


class BudgetExceeded(Exception):
    """A run went over its cap; ``what`` names the limit (``events``)."""

    def __init__(self, what, used, cap):
        super().__init__(f"the run used {used:,} {what}, over its cap of {cap:,}")
        self.what, self.used, self.cap = what, used, cap


def _list(value):
    return value if isinstance(value, list) else []


def _broker_count(doc):
    brokers = doc.get("brokers", 3)
    return len(brokers) if isinstance(brokers, list) else brokers if isinstance(brokers, int) else 3


def cost_terms(doc):
    """The estimate's terms: {field driving the cost: events}, largest first."""
    duration = doc.get("duration_ms", 60000)
    seconds = max(duration if isinstance(duration, int) else 60000, 0) / 1000
    topics = {str(t.get("name")): t for t in _list(doc.get("topics")) if isinstance(t, dict)}
    rate = sum(c.get("rate_per_s") or 0 for c in _list(doc.get("clients"))
               if isinstance(c, dict) and c.get("type") == "producer" and isinstance(c.get("rate_per_s"), int))
    followers = sum(t.get("partitions", 1) * max(t.get("replication_factor", 1) - 1, 0) for t in topics.values()
                    if isinstance(t.get("partitions", 1), int) and isinstance(t.get("replication_factor", 1), int))
    produced = sum(op.get("count", 1) for op in _list(doc.get("timeline"))
                   if isinstance(op, dict) and op.get("op") == "produce" and isinstance(op.get("count", 1), int))
    terms = {
        "rate_per_s": rate * seconds * EVENTS_PER_RECORD,
        "topics": followers * seconds * EVENTS_PER_FOLLOWER_S,
        "brokers": _broker_count(doc) * seconds * EVENTS_PER_BROKER_S,
        "timeline": produced * EVENTS_PER_PRODUCED_RECORD,
    }
    voters = _voter_count(doc)
    if voters:
        terms["controllers"] = voters * seconds * EVENTS_PER_VOTER_S
        terms["brokers"] += _broker_count(doc) * seconds * EVENTS_PER_KRAFT_BROKER_S
    return {k: int(v * HEADROOM) for k, v in sorted(terms.items(), key=lambda kv: -kv[1])}


def estimate(doc):
    """Predicted scheduler events of a whole run of ``doc`` (a scenario document)."""
    return sum(cost_terms(doc).values())


def refusal(doc, budget, surface):
    """``None`` when ``doc`` fits ``budget`` events, else (field, message, allowed) naming the
    fields that drive the cost, the estimate and the budget — what to change."""
    need = estimate(doc)
    if need <= budget:
        return None
    terms = cost_terms(doc)
    drivers = [k for k, v in terms.items() if v >= need * 0.2][:2]
    hints = {"rate_per_s": "lower the producers' rate_per_s", "topics": "use fewer partitions or a lower "
             "replication_factor", "brokers": "use fewer brokers", "timeline": "produce fewer records",
             "controllers": "use fewer controller voters"}
    advice = " or ".join(["shorten duration_ms"] + [hints[d] for d in drivers])
    return ("duration_ms" if drivers and drivers[0] != "timeline" else drivers[0] if drivers else "duration_ms",
            f"this scenario needs ~{_human(need)} simulation events ({', '.join(drivers)} drive it); "
            f"{surface} allow {_human(budget)}",
            advice)


def _human(n):
    for unit, size in (("G", 10 ** 9), ("M", 10 ** 6), ("k", 10 ** 3)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return str(n)


class Cap:
    """Hard limits on one run: ``check(sim)`` raises ``BudgetExceeded`` past them. ``run_capped``
    advances a simulation in slices of simulated time and checks between slices, so a run the
    estimate misjudged costs at most one slice more than its cap."""

    SLICE_MS = 1000

    def __init__(self, events, cancelled=None):
        self.events = events
        self.cancelled = cancelled or (lambda: False)

    def check(self, sim):
        used = sim.scheduler.events
        if used > self.events:
            raise BudgetExceeded("events", used, self.events)
        if self.cancelled():
            raise BudgetExceeded("time", used, self.events)

    def run_to(self, sim, t_ms):
        while sim.now_ms < t_ms:
            sim.advance_to(min(t_ms, sim.now_ms + self.SLICE_MS))
            self.check(sim)
        return sim

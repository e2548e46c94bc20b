"""Counterexample search and shrinking: "can these settings lose an acknowledged write?".

A *property* is checked on a finished run. ``search`` draws fault schedules from a fault profile
(one per seed, ``faults.fault_timeline``) until one breaks the property, or reports honestly that
none did in N runs. ``shrink`` then minimises the failing scenario: delta debugging (ddmin) over
the timeline operations, then smaller numbers — fewer brokers and partitions, a slower producer,
earlier operation times, a shorter run — keeping only changes that still break the property.
Everything is deterministic, so the same failing scenario always shrinks to the same result.
``narrate`` turns the shrunk run's events into numbered steps built from their ``reason``s.

The evaluation of candidates is a plain function (``check``), so the app can run many of them on
Spark executors; this module itself stays sequential and standard-library only.
"""
import copy

from engine.tools.faults import fault_timeline, session_timeout
from engine.narration import explain
from engine.scenario.document import ScenarioError, load
from engine.simulation import Simulation

PROPERTIES = {
    "no_acked_loss": "no acknowledged record is lost",
    "no_acked_all_loss": "no record acknowledged with acks=all is lost",
    "no_violation": "no engine invariant is violated",
    "invariant": "the named engine invariant holds (param: invariant name)",
    "max_offline_ms": "no partition is offline longer than param ms",
    "no_error": "no produce request fails with the named Kafka error (param)",
}
INVARIANTS = ("leader_not_in_isr", "hw_above_leo", "leader_hw_decreased", "epoch_decreased",
              "acked_record_lost", "replica_divergence", "consumer_read_lost_record")


def check_property(prop, result):
    """(broken, evidence) for one property on a result document. ``prop`` is
    {"name": one of PROPERTIES, "param": ...}; evidence names the time and records involved."""
    name = prop.get("name", "no_acked_loss")
    param = prop.get("param")
    if name in ("no_acked_loss", "no_acked_all_loss"):
        lost = [r for r in result["records"] if r["lost"] and (name == "no_acked_loss" or r["acks"] == "all")]
        if not lost:
            return False, None
        when = _loss_time(result, {r["id"] for r in lost})
        return True, {"t_ms": when, "records": [r["id"] for r in lost],
                      "detail": f"{len(lost)} acknowledged record(s) lost, e.g. {lost[0]['id']} "
                                f"(acks={lost[0]['acks']}, offset {lost[0]['offset']} of "
                                f"{lost[0]['topic']}-{lost[0]['partition']})",
                      "topic": lost[0]["topic"], "partition": lost[0]["partition"]}
    if name in ("no_violation", "invariant"):
        hits = [v for v in result["violations"] if name == "no_violation" or v["invariant"] == param]
        if not hits:
            return False, None
        v = hits[0]
        return True, {"t_ms": v["t_ms"], "records": v["records"], "detail": f"{v['invariant']}: {v['detail']}",
                      "topic": v["topic"], "partition": v["partition"]}
    if name == "max_offline_ms":
        worst = _longest_offline(result)
        if worst is None or worst[0] <= param:
            return False, None
        span, key, start = worst
        topic, part = key.rsplit("-", 1)
        return True, {"t_ms": start + param, "records": [], "topic": topic, "partition": int(part),
                      "detail": f"{key} offline for {span} ms > {param} ms (from {start} ms)"}
    if name == "no_error":
        errors = [e for e in result["history"] if e["type"] == "produce_error" and e.get("error") == param]
        if not errors:
            return False, None
        e = errors[0]
        return True, {"t_ms": e["t_ms"], "records": e.get("records", []), "topic": e.get("topic"),
                      "partition": e.get("partition"), "detail": f"{param}: {e['reason']}"}
    raise ValueError(f"unknown property {name!r} (allowed: {', '.join(PROPERTIES)})")


def validate_property(prop):
    if not isinstance(prop, dict) or prop.get("name", "no_acked_loss") not in PROPERTIES:
        raise ScenarioError("property.name", f"{prop!r} is not a property", ", ".join(PROPERTIES))
    name = prop.get("name", "no_acked_loss")
    param = prop.get("param")
    if name == "invariant" and param not in INVARIANTS:
        raise ScenarioError("property.param", f"{param!r} is not an invariant", ", ".join(INVARIANTS))
    if name == "max_offline_ms" and (isinstance(param, bool) or not isinstance(param, int) or param < 0):
        raise ScenarioError("property.param", f"{param!r} is not a duration", "an integer >= 0 (ms)")
    if name == "no_error" and not isinstance(param, str):
        raise ScenarioError("property.param", f"{param!r} is not an error name",
                            "a Kafka error name, e.g. NOT_ENOUGH_REPLICAS")
    return {"name": name, "param": param}


def _loss_time(result, ids):
    for v in result["violations"]:
        if v["invariant"] == "acked_record_lost" and set(v["records"]) & ids:
            return v["t_ms"]
    for e in result["history"]:
        if e["type"] == "truncation" and e.get("removed"):
            return e["t_ms"]
    return result["end_ms"]


def _longest_offline(result):
    since = {}
    worst = None
    for e in result["history"]:
        key = f"{e.get('topic')}-{e.get('partition')}"
        if e["type"] == "partition_offline":
            since.setdefault(key, e["t_ms"])
        elif e["type"] in ("leader_elected", "partition_created") and key in since:
            span = e["t_ms"] - since.pop(key)
            if worst is None or span > worst[0]:
                worst = (span, key, e["t_ms"] - span)
    for key, start in since.items():
        span = result["end_ms"] - start
        if worst is None or span > worst[0]:
            worst = (span, key, start)
    return worst


def check(scenario, prop):
    """Run one candidate: (broken, evidence, result). Invalid candidates count as not broken."""
    try:
        result = Simulation(scenario).run()
    except ScenarioError:
        return False, None, None
    broken, evidence = check_property(prop, result)
    return broken, evidence, result


def evaluate_seed(payload):
    """One search run, shaped for executors: ``(base_json, prop, profile, seed)`` ->
    ``(seed, broken, evidence)``. Only the engine is needed to run it."""
    import json
    base_json, prop, profile, seed = payload
    broken, evidence, _ = check(candidate(json.loads(base_json), profile, seed), prop)
    return seed, broken, evidence


# -- search -------------------------------------------------------------------------------------------
def candidate(base, profile, seed, fault_fraction=0.6):
    """The scenario of search run ``seed``: the base scenario with a fault schedule drawn from
    the profile (fault phase, then healing phase)."""
    scenario = load(base)
    session = session_timeout(scenario)   # ZooKeeper's, or broker.session.timeout.ms in KRaft
    fault_end_ms = int(scenario["duration_ms"] * fault_fraction)
    scenario["seed"] = seed
    scenario["timeline"] = sorted(scenario["timeline"] + fault_timeline(
        scenario, profile, seed, start_ms=1000, fault_end_ms=fault_end_ms, session_timeout_ms=session),
        key=lambda op: op["at_ms"])
    _retitle(scenario, seed, fault_end_ms)
    return load(scenario)


def _retitle(scenario, seed, fault_end_ms):
    """A search run is not the story it started from: its title and guide say what it is, so a
    replay never shows a story's "acks=all records survive" above a run that lost some."""
    base = scenario["name"]
    scenario["name"] = f"Search run, seed {seed}: {base}"[:200]
    scenario["description"] = (
        f"A counterexample search run: the scenario \"{base}\" with seed {seed} and random faults drawn "
        f"from it until {fault_end_ms} ms, then every link heals. The story's own guide does not apply "
        f"to it; what this run loses or breaks is what the search found.")


def search(base, prop, profile=None, runs=100, first_seed=0, progress=None):
    """Try seeds first_seed.. until one breaks the property. Returns
    {"found": bool, "runs": n, "seed", "scenario", "evidence"}."""
    prop = validate_property(prop)
    for i in range(runs):
        seed = first_seed + i
        scenario = candidate(base, profile, seed)
        broken, evidence, _ = check(scenario, prop)
        if progress:
            progress(i + 1, runs)
        if broken:
            return {"found": True, "runs": i + 1, "seed": seed, "scenario": scenario, "evidence": evidence}
    return {"found": False, "runs": runs, "seed": None, "scenario": None, "evidence": None}


# -- shrinking ------------------------------------------------------------------------------------------
class Shrinker:
    """ddmin over timeline operations, then numeric simplification; counts evaluations."""

    def __init__(self, prop, budget=400):
        self.prop = validate_property(prop)
        self.budget = budget
        self.evaluations = 0
        self._cache = {}

    def fails(self, scenario):
        key = _canonical(scenario)
        if key in self._cache:
            return self._cache[key]
        if self.evaluations >= self.budget:
            return False
        self.evaluations += 1
        broken = check(scenario, self.prop)[0]
        self._cache[key] = broken
        return broken

    def shrink(self, scenario):
        scenario = load(scenario)
        if not self.fails(scenario):
            raise ValueError("the scenario does not break the property: nothing to shrink")
        scenario = self._ddmin_timeline(scenario)
        for step in (self._fewer_brokers, self._fewer_partitions, self._slower_producers,
                     self._smaller_counts, self._earlier_ops, self._shorter_run, self._ddmin_timeline):
            scenario = step(scenario)
        return scenario

    # -- ddmin on the timeline -------------------------------------------------------------------------
    def _ddmin_timeline(self, scenario):
        ops = scenario["timeline"]
        n = 2
        while len(ops) >= 2:
            chunk = max(1, len(ops) // n)
            subsets = [ops[i:i + chunk] for i in range(0, len(ops), chunk)]
            reduced = False
            for i in range(len(subsets)):
                complement = [op for j, s in enumerate(subsets) if j != i for op in s]
                trial = _with_timeline(scenario, complement)
                if trial is not None and self.fails(trial):
                    ops, n, reduced = complement, max(n - 1, 2), True
                    break
            if not reduced:
                if n >= len(ops):
                    break
                n = min(len(ops), n * 2)
        if len(ops) == 1:
            trial = _with_timeline(scenario, [])
            if trial is not None and self.fails(trial):
                ops = []
        return _with_timeline(scenario, ops)

    # -- numbers ----------------------------------------------------------------------------------------
    def _try(self, scenario, mutate):
        trial = copy.deepcopy(scenario)
        try:
            mutate(trial)
            trial = load(trial)
        except (ScenarioError, ValueError, KeyError, IndexError):
            return None
        return trial if self.fails(trial) else None

    def _fewer_brokers(self, scenario):
        while len(scenario["brokers"]) > 1:
            drop = max(scenario["brokers"])

            def mutate(s, drop=drop):
                if any(op.get("broker") == drop or drop in _nodes_of(op) for op in s["timeline"]):
                    raise ValueError("used")
                s["brokers"] = [b for b in s["brokers"] if b != drop]
                (s.get("racks") or {}).pop(str(drop), None)   # its rack, if it had one
                for t in s["topics"]:
                    if any(drop in r for r in t["assignment"].values()):
                        raise ValueError("assigned")
            trial = self._try(scenario, mutate)
            if trial is None:
                break
            scenario = trial
        return scenario

    def _fewer_partitions(self, scenario):
        def mutate(s):
            for t in s["topics"]:
                if t["partitions"] > 1:
                    t["partitions"] = 1
                    t["assignment"] = {"0": t["assignment"]["0"]}
            for op in s["timeline"]:
                if op.get("partition"):
                    op["partition"] = 0
        return self._try(scenario, mutate) or scenario

    def _slower_producers(self, scenario):
        for i, client in enumerate(scenario["clients"]):
            if client["type"] != "producer" or not client.get("rate_per_s"):
                continue
            scenario = self._halve(scenario, client["rate_per_s"],
                                   lambda s, new, i=i: s["clients"][i].__setitem__("rate_per_s", new))
        return scenario

    def _halve(self, scenario, value, assign):
        """Halve a number (``assign(scenario, new)`` sets it) while the property still breaks."""
        while value > 1:
            new = value // 2
            trial = self._try(scenario, lambda s, new=new: assign(s, new))
            if trial is None:
                break
            scenario, value = trial, new
        return scenario

    def _smaller_counts(self, scenario):
        for i, op in enumerate(scenario["timeline"]):
            if op["op"] == "produce" and op["count"] > 1:
                scenario = self._halve(scenario, op["count"],
                                       lambda s, new, i=i: s["timeline"][i].__setitem__("count", new))
        return scenario

    def _earlier_ops(self, scenario):
        """Move each operation as early as it can go (binary search), in time order."""
        for i in range(len(scenario["timeline"])):
            lo = scenario["timeline"][i - 1]["at_ms"] if i else 0
            hi = scenario["timeline"][i]["at_ms"]
            while hi - lo > 100:
                mid = (lo + hi) // 2

                def mutate(s, i=i, mid=mid):
                    s["timeline"][i]["at_ms"] = mid
                trial = self._try(scenario, mutate)
                if trial is None:
                    lo = mid
                else:
                    scenario, hi = trial, mid
        return scenario

    def _shorter_run(self, scenario):
        lo = max([op["at_ms"] for op in scenario["timeline"]] + [1])
        hi = scenario["duration_ms"]
        while hi - lo > 500:
            mid = (lo + hi) // 2

            def mutate(s, mid=mid):
                s["duration_ms"] = mid
                for c in s["clients"]:
                    if c.get("stop_ms") is not None and c["stop_ms"] > mid:
                        c["stop_ms"] = mid
            trial = self._try(scenario, mutate)
            if trial is None:
                lo = mid
            else:
                scenario, hi = trial, mid
        return scenario


def shrink(scenario, prop, budget=400):
    """Minimise a failing scenario. Returns (scenario, evaluations)."""
    shrinker = Shrinker(prop, budget)
    return shrinker.shrink(scenario), shrinker.evaluations


def _with_timeline(scenario, ops):
    trial = copy.deepcopy(scenario)
    trial["timeline"] = copy.deepcopy(ops)
    try:
        return load(trial)
    except ScenarioError:
        return None


def _nodes_of(op):
    nodes = []
    for field in ("from", "to"):
        value = op.get(field)
        if isinstance(value, list):
            nodes.extend(value)
        elif value is not None:
            nodes.append(value)
    for group in op.get("groups", []):
        nodes.extend(group)
    return nodes


def _canonical(scenario):
    import json
    return json.dumps(scenario, sort_keys=True)


# -- narration ------------------------------------------------------------------------------------------
STORY_TYPES = ("fault", "session_expired", "controller_elected", "leader_elected", "partition_offline",
               "isr_shrink", "isr_expand", "truncation", "broker_stopped", "zk_session_lost",
               "become_follower_skipped", "violation", "produce_error", "alter_partition")


def narrate(result, evidence=None, limit=40):
    """Numbered steps of what happened, from the events' reasons, ending at the property's break."""
    end = evidence["t_ms"] if evidence else result["end_ms"]
    steps = []
    seen_errors = set()
    for e in result["history"]:
        if e["t_ms"] > end or e["type"] not in STORY_TYPES:
            continue
        if e["type"] == "fault" and e.get("op") == "crash":
            continue  # broker_stopped at the same moment says it, with what survives
        if e["type"] == "produce_error":
            if e.get("error") in seen_errors:
                continue
            seen_errors.add(e.get("error"))
        where = f"{e['topic']}-{e['partition']}: " if e.get("topic") is not None and e.get("partition") is not None else ""
        who = f"broker {e['broker']}: " if e.get("broker") is not None and e["type"] != "fault" else ""
        if e["type"] == "alter_partition":
            who, where = "", ""  # the sentence names the leader and the partition
        steps.append({"t_ms": e["t_ms"], "type": e["type"], "text": f"{who}{where}{explain(e)}"})
    if len(steps) > limit:
        steps = steps[:limit // 2] + steps[-limit // 2:]
    if evidence:
        steps.append({"t_ms": evidence["t_ms"], "type": "property_broken", "text": evidence["detail"]})
    return [dict(s, step=i + 1) for i, s in enumerate(steps)]

"""A scenario of a real cluster from Kafka's own tool output (docs/scenario-format.md §7).

``import_cluster(describe, kafka_version, api_versions=None, quorum=None)`` is a pure function of
the pasted texts and the era the user picks: it returns the scenario (validated by
``engine.scenario.document.load``) and the notes a person must read - what the scenario could not
keep of the pasted cluster. It refuses, with ``ImportRefused`` naming the text and the line,
anything it cannot read or that is over the simulator's limits; nothing half-built comes out.

What is kept: every broker id seen (Replicas, the api-versions brokers, the quorum's observers),
each topic with its partitions and its ``assignment`` exactly as the Replicas column (the first
replica is the preferred leader), the topic configs the simulator models, racks, and the KRaft
voters as ``controllers``. A scenario starts healthy (§1.2: leader = the first replica, ISR = every
replica), so leaders, ISRs, ELRs and offline replicas of the pasted cluster are notes, not state.
"""
from engine import eras
from engine.kraft.kraft_scenario import DEFAULT_CONTROLLERS, MAX_CONTROLLERS
from engine.scenario.document import load
from engine.scenario.fields import MAX_BROKERS, MAX_PARTITIONS, TOP_LEVEL, ScenarioError, config_value
from engine.scenario.import_describe import SOURCE as DESCRIBE, parse_describe
from engine.scenario.import_notes import state_notes
from engine.scenario.import_text import ImportRefused, examples, name_brokers, numbered_lines, plural, where
from engine.scenario.import_tools import parse_api_versions, parse_quorum

MAX_TOPICS = 100                    # engine/scenario/validators.py _topics
#: the topic configs the simulator models, by the name kafka-topics.sh prints -> the scenario's key
#: (LogConfig's topic names; the scenario names every config by its broker name, eras.CONFIG)
TOPIC_CONFIGS = {"min.insync.replicas": "min.insync.replicas",
                 "unclean.leader.election.enable": "unclean.leader.election.enable",
                 "flush.messages": "log.flush.interval.messages", "flush.ms": "log.flush.interval.ms"}
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__cluster_metadata")


def import_cluster(describe, kafka_version, api_versions=None, quorum=None, topics=None, name=None):
    """``(scenario, notes)`` of the cluster the texts describe, in era ``kafka_version``."""
    if kafka_version not in eras.VERSIONS:
        raise ImportRefused("kafka_version", f"{kafka_version!r} is not a supported era",
                            ", ".join(eras.VERSIONS))
    described = _chosen(parse_describe(numbered_lines(describe, DESCRIBE)), topics)
    nodes = parse_api_versions(numbered_lines(api_versions, "api-versions")) if _given(api_versions) else None
    voters = parse_quorum(numbered_lines(quorum, "quorum")) if _given(quorum) else None
    notes = []
    brokers = _brokers(described, nodes, voters, notes)
    scenario = {"name": name or "imported cluster", "description": "", "seed": 0,
                "kafka_version": kafka_version, "brokers": brokers}
    if kafka_version in eras.KRAFT_VERSIONS:
        scenario["controllers"] = _controllers(voters, brokers, notes)
    elif voters is not None:
        notes.append(f"the KRaft quorum (voters {examples(voters.voters)}) is not used: kafka_version "
                     f"{kafka_version} runs on ZooKeeper")
    racks = _racks(nodes, brokers, notes)
    if racks:
        scenario["racks"] = racks
    scenario["topics"] = _topics(described, kafka_version, notes)
    notes[:0] = state_notes(described)
    scenario["description"] = _description(described, brokers, notes)
    try:
        load(scenario)
    except ScenarioError as exc:          # a bug of the importer, or an engine older than the contract
        raise ImportRefused(f"scenario.{exc.field}" if exc.field else "scenario",
                            f"the imported scenario is not valid: {exc.message}", exc.allowed) from None
    return scenario, notes


def _given(text):
    return text is not None and (text.strip() if isinstance(text, str) else text)


def _chosen(described, names):
    if not names:
        chosen = described
    else:
        known = {t.name: t for t in described}
        for n in names:
            if n not in known:
                raise ImportRefused("topic", f"no topic {n} in the describe output", examples(known, 10))
        chosen = [t for t in described if t.name in set(names)]
    if len(chosen) > MAX_TOPICS:
        raise ImportRefused(DESCRIBE, f"describes {len(chosen)} topics",
                            f"at most {MAX_TOPICS} topics in a scenario (import fewer: isrlab import-cluster --topic NAME)",
                            too_large=True)
    total = sum(t.partition_count for t in chosen)
    if total > MAX_PARTITIONS:
        raise ImportRefused(DESCRIBE, f"describes {total:,} partitions",
                            f"at most {MAX_PARTITIONS:,} partitions in a scenario (import fewer topics: "
                            "isrlab import-cluster --topic NAME)", too_large=True)
    return chosen


def _brokers(described, nodes, voters, notes):
    """Every broker id seen, sorted (brokers start in id order, scenario format §1.2)."""
    holding = {r for t in described for p in t.partitions.values() for r in p.replicas}
    ids = set(holding)
    if nodes is not None:
        ids |= set(nodes.racks)
        absent = sorted(holding - set(nodes.racks))
        if absent:
            notes.append(f"{name_brokers(absent, ('holds', 'hold'))} replicas but "
                         f"{'is' if len(absent) == 1 else 'are'} not in the api-versions output (down at the "
                         "time?); the simulation starts every broker running")
        if nodes.unreachable:
            notes.append(f"kafka-broker-api-versions.sh could not reach {name_brokers(nodes.unreachable)}; "
                         "the simulation starts every broker running")
        if nodes.fenced:
            notes.append(f"at import, {name_brokers(nodes.fenced, ('was', 'were'))} fenced; the simulation starts every "
                         "broker unfenced")
    if voters is not None:
        ids |= set(voters.observers) - set(voters.voters)
    if len(ids) > MAX_BROKERS:
        raise ImportRefused(DESCRIBE, f"the cluster has {len(ids)} brokers (ids {examples(sorted(ids))})",
                            f"at most {MAX_BROKERS} brokers (the simulator's MAX_BROKERS)", too_large=True)
    return sorted(ids)


def _controllers(voters, brokers, notes):
    """The voters as dedicated controllers, or "combined" when every broker is a voter (§4.2)."""
    if voters is None:
        ids = _free_ids(DEFAULT_CONTROLLERS, brokers)
        notes.append(f"no kafka-metadata-quorum.sh output: the simulation uses three dedicated controllers "
                     f"{examples(ids)}")
        return ids
    field = where("quorum", voters.line)
    if voters.leader is not None:
        notes.append(f"at import, controller {voters.leader} led the quorum; the simulation's voters elect "
                     "their own leader")
    shared = set(voters.voters) & set(brokers)
    if shared and shared == set(brokers) and len(voters.voters) == len(brokers):
        return "combined"
    if shared:
        ids = _free_ids(DEFAULT_CONTROLLERS, brokers)
        notes.append(f"voters {examples(voters.voters)} include brokers {examples(sorted(shared))} but not every "
                     f"broker: the simulator's combined mode makes every broker a voter, so the simulation uses "
                     f"dedicated controllers {examples(ids)} instead")
        return ids
    if len(voters.voters) > MAX_CONTROLLERS:
        raise ImportRefused(field, f"the quorum has {len(voters.voters)} voters",
                            f"at most {MAX_CONTROLLERS} controllers", too_large=True)
    return sorted(voters.voters)


def _free_ids(wanted, brokers):
    """``wanted`` unless one of them is a broker id; then as many ids above every broker's."""
    if not set(wanted) & set(brokers):
        return list(wanted)
    start = max(brokers) + 1
    return list(range(start, start + len(wanted)))


def _racks(nodes, brokers, notes):
    """``{"<id>": rack}`` of the brokers with a rack (the racks field), or None when no rack is known."""
    if nodes is None:
        return None
    racks = {str(b): nodes.racks[b] for b in brokers if nodes.racks.get(b)}
    if not racks:
        return None
    bare = [b for b in brokers if not nodes.racks.get(b)]
    if bare:
        notes.append(f"{name_brokers(bare, ('has', 'have'))} no rack (rack: null, or not in the api-versions output)")
    if "racks" not in TOP_LEVEL:          # an engine without the racks field (feat/racks)
        notes.append(f"the racks ({examples(f'broker {b}: {r}' for b, r in racks.items())}) are not modelled by "
                     "this version of the simulator and were left out")
        return None
    return racks


def _topics(described, version, notes):
    unmodelled = {}
    out = []
    for t in described:
        topic = {"name": t.name, "partitions": t.partition_count,
                 "replication_factor": len(t.partitions[0].replicas),
                 "assignment": {str(p): list(t.partitions[p].replicas) for p in range(t.partition_count)}}
        config = {}
        for key, value in t.configs:
            if key in TOPIC_CONFIGS:
                config[TOPIC_CONFIGS[key]] = _config(version, key, value, t.line)
            else:
                unmodelled.setdefault(key, []).append(t.name)
        if config:
            topic["config"] = config
        out.append(topic)
    if unmodelled:
        keys = [f"{key} ({names[0] if len(names) == 1 else plural(len(names), 'topic') + ': ' + examples(names, 3)})"
                for key, names in unmodelled.items()]
        notes.append(f"topic configs the simulator does not model were left out: {examples(keys, 12)}")
    internal = [t.name for t in described if t.name in INTERNAL_TOPICS]
    if internal:
        notes.append(f"internal topic {examples(internal)} is imported as an ordinary topic")
    return out


def _config(version, key, text, line):
    """A Configs value as the scenario's typed value, checked against the era's table."""
    scenario_key = TOPIC_CONFIGS[key]
    kind = eras.CONFIG[scenario_key][0]
    value = text
    if kind in ("int", "int?") and text.lstrip("-").isdigit() and len(text) <= 20:
        value = int(text)
    try:
        return config_value(version, scenario_key, value, key, {"topic"})
    except ScenarioError as exc:
        raise ImportRefused(where(DESCRIBE, line), f"Configs {key}={text[:40]}: {exc.message}", exc.allowed) from None


def _description(described, brokers, notes):
    parts = sum(t.partition_count for t in described)
    text = (f"Imported from kafka-topics.sh --describe: {plural(len(described), 'topic')}, "
            f"{plural(parts, 'partition')} on {plural(len(brokers), 'broker')} ({examples(brokers, 8)}).")
    if notes:
        text += " Notes: " + " ".join(f"({i}) {n}." for i, n in enumerate(notes, 1))
    return text[:20000]

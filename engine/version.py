"""The engine's version: saved runs and seek indexes record it, and stored snapshots are only
reused by the same version (app.replay). A leaf module, so ``result`` can name it without importing
``simulation``.

Old runs keep replaying as they were saved: ``Simulation(doc, engine_version="1.1.0")`` runs with
engine 1.1.0's network behaviour (docs/model.md §19, "Engine versions and old runs").
``supported(version)`` names the version a simulation actually runs as.
"""
# 1.1.0: ZooKeeper as a real one answers (docs/model.md §9.10)
# 1.2.0: what a cut held arrives at TCP's next retransmission after the heal, and a request
#        timeout closes its connection (docs/model.md §16, network): re-simulations of runs
#        saved by 1.1.0 that cut and heal links differ
# 1.3.0: eleven rules read again against Kafka's code at the release tags (docs/model.md §19,
#        "What 1.3.0 changed"): re-simulations of runs saved by 1.2.0 keep 1.2.0's rules
# 1.4.0: the deviations the second readers of 1.3.0 found in the 3.x / 4.x eras (docs/model.md
#        §19, "What 1.4.0 changed"): re-simulations of runs saved by 1.3.0 keep 1.3.0's rules
# 1.5.0: the producer's recovery from OUT_OF_ORDER_SEQUENCE_NUMBER and the remaining ZooKeeper-mode
#        deviations of docs/model.md §16 (docs/model.md §19, "What 1.5.0 changed"): re-simulations
#        of runs saved by 1.4.0 keep 1.4.0's rules
ENGINE_VERSION = "1.5.0"

#: The versions whose behaviour the engine can reproduce, oldest first.
SUPPORTED_VERSIONS = ("1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0")
#: Engine 1.1.0's network (delivery at the heal, per-request timeouts and backoff).
V1_1_0 = "1.1.0"
#: Engine 1.2.0's rules, before the fixes of 1.3.0.
V1_2_0 = "1.2.0"
#: Engine 1.3.0's rules, before the fixes of 1.4.0.
V1_3_0 = "1.3.0"
#: Engine 1.4.0's rules, before the fixes of 1.5.0.
V1_4_0 = "1.4.0"


def has_1_3_rules(version):
    """Does a run made by engine ``version`` (a supported one) follow 1.3.0's rules?"""
    return version not in (V1_1_0, V1_2_0)


def has_1_4_rules(version):
    """Does a run made by engine ``version`` (a supported one) follow 1.4.0's rules?"""
    return version not in (V1_1_0, V1_2_0, V1_3_0)


def has_1_5_rules(version):
    """Does a run made by engine ``version`` (a supported one) follow 1.5.0's rules?"""
    return version not in (V1_1_0, V1_2_0, V1_3_0, V1_4_0)


def _parse(version):
    try:
        parts = tuple(int(p) for p in str(version).split("."))
    except ValueError:
        return None
    return parts if parts and len(parts) <= 4 else None


def supported(version):
    """The supported version a run made by engine ``version`` re-simulates under: itself when
    supported; None (or an unreadable string) -> the current one; an older unknown version (e.g.
    "1.0.0") -> the oldest supported (1.1.0), the nearest we can reproduce; a newer one -> the
    current one. Callers say so when the answer differs from ``version`` (``exact``)."""
    if version is None:
        return ENGINE_VERSION
    version = str(version)
    if version in SUPPORTED_VERSIONS:
        return version
    parsed = _parse(version)
    if parsed is None:
        return ENGINE_VERSION
    best = SUPPORTED_VERSIONS[0]
    for candidate in SUPPORTED_VERSIONS:
        if _parse(candidate) <= parsed:
            best = candidate
    return best


def exact(version):
    """Can this engine reproduce runs made by engine ``version`` exactly?"""
    return version is None or str(version) in SUPPORTED_VERSIONS

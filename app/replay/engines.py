"""Which engine behaviour a stored run or link re-simulates under (docs/model.md §19).

A run records the engine version that made it (saved runs: the ``engine_version`` column; links:
their ``"e"``). Replays, seek indexes, forks and imports re-simulate it with that version's
behaviour (``Simulation(doc, engine_version=...)``), so old runs keep replaying byte for byte.
A version this engine cannot reproduce runs as the nearest it can (``engine.version.supported``),
and the replay says so rather than promising an identical history.
"""
from engine.version import ENGINE_VERSION, exact, supported


def run_as(made_by):
    """The supported engine version a run made by engine ``made_by`` re-simulates under."""
    return supported(made_by)


def note(made_by):
    """None when ``made_by``'s runs are reproduced exactly; otherwise what the replay does."""
    if exact(made_by):
        return None
    return (f"made by engine {str(made_by)[:32]}, which this server cannot reproduce exactly: "
            f"re-simulated as engine {supported(made_by)}, the nearest it can; the history may differ")


def index_version(made_by):
    """The seek-index key of a run made by ``made_by`` (indexes hold this server's pickles, so
    the key names this engine, and the behaviour it ran as when that is an older one)."""
    version = supported(made_by)
    return ENGINE_VERSION if version == ENGINE_VERSION else f"{ENGINE_VERSION}+as-{version}"

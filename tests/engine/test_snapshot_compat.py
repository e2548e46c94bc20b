"""Snapshots pickled by an older engine still load.

Saved runs keep seek indexes of pickled ``Simulation`` snapshots (app.replay), keyed by
``ENGINE_VERSION``. Pickle records each class's ``__module__`` and the names of bound methods in
the scheduler heap, so moving a class to another module or renaming a scheduled method breaks
stored indexes even when behaviour is unchanged. ``golden_snapshot.pickle.zlib`` was taken with
the engine as it was before the module split (``golden_snapshot.json`` says when and what it
references); do not regenerate it for a refactoring - only with a new ENGINE_VERSION:

    python -m tests.engine.test_snapshot_compat --regenerate
"""
import hashlib
import importlib
import io
import json
import os
import pickle
import sys
import zlib

from engine.scenario.library import library
from engine.simulation import ENGINE_VERSION, Simulation
from engine.snapshots import current_module

HERE = os.path.dirname(__file__)
BLOB = os.path.join(HERE, "golden_snapshot.pickle.zlib")
META = os.path.join(HERE, "golden_snapshot.json")
SCENARIO = "broker-failure-clean-election"    # its snapshot references every snapshot class


class _Recorder(pickle.Unpickler):
    """Unpickler noting every (module, name) global a pickle references."""
    def __init__(self, blob):
        super().__init__(io.BytesIO(blob))
        self.globals = set()

    def find_class(self, module, name):
        self.globals.add((module, name))
        return super().find_class(module, name)


def result_digest(sim):
    return hashlib.sha256(json.dumps(sim.run(), sort_keys=True, default=str).encode()).hexdigest()


def _meta():
    with open(META, encoding="utf-8") as handle:
        return json.load(handle)


def test_every_global_an_old_snapshot_references_is_still_importable():
    """Through ``engine.snapshots``: modules that moved into packages are found at their new home."""
    missing = []
    for module, name in _meta()["globals"]:
        try:
            getattr(importlib.import_module(current_module(module)), name)
        except (ImportError, AttributeError):
            missing.append(f"{module}.{name}")
    assert missing == []


def test_new_snapshots_reference_the_same_class_paths():
    doc = library()[SCENARIO]
    sim = Simulation(doc)
    sim.advance_to(_meta()["at_ms"])
    recorder = _Recorder(sim.snapshot())
    recorder.load()
    pinned = {(current_module(module), name) for module, name in _meta()["globals"]}
    assert sorted(recorder.globals - pinned) == []


def test_the_old_snapshot_needs_the_module_map():
    """The pinned snapshot names pre-package paths (``engine.broker``): a plain unpickler can no
    longer read it, which is why every snapshot reader goes through ``SnapshotUnpickler``."""
    with open(BLOB, "rb") as handle:
        blob = zlib.decompress(handle.read())
    try:
        pickle.loads(blob)
    except (ImportError, AttributeError):
        pass
    else:
        raise AssertionError("the pinned snapshot no longer names an old module path")
    assert ("engine.broker", "Broker") in {tuple(g) for g in _meta()["globals"]}


def test_an_old_snapshot_restores_and_finishes_like_a_straight_run():
    meta = _meta()
    with open(BLOB, "rb") as handle:
        sim = Simulation.restore(zlib.decompress(handle.read()))
    assert sim.now_ms == meta["at_ms"]
    # taken before snapshots recorded their engine version: it continues with engine 1.2.0's rules
    assert sim.engine_version == "1.2.0" and not sim.rules_1_3
    straight = Simulation(library()[SCENARIO], engine_version="1.2.0")
    assert result_digest(sim) == meta["result_sha256"] == result_digest(straight)


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python -m tests.engine.test_snapshot_compat --regenerate")
    doc = library()[SCENARIO]
    at_ms = doc["duration_ms"] // 3
    sim = Simulation(doc)
    sim.advance_to(at_ms)
    blob = sim.snapshot()
    recorder = _Recorder(blob)
    recorder.load()
    with open(BLOB, "wb") as handle:
        handle.write(zlib.compress(blob, 9))
    with open(META, "w", encoding="utf-8") as handle:
        json.dump({"scenario": SCENARIO, "at_ms": at_ms, "engine_version": ENGINE_VERSION,
                   "result_sha256": result_digest(Simulation(doc)),
                   "globals": sorted(recorder.globals)}, handle, indent=1)
        handle.write("\n")
    print(f"wrote {BLOB} and {META}")

"""Run planning: every run of a sweep has a deterministic number and key.

``run_no`` = cell_id * seed count + seed index: the run's place in the sweep (dense integers, so
JDBC reads can split a sweep's runs into ranges). ``run_key`` = the first 20 hex digits of
SHA-256(sweep id, the cell's settings as canonical JSON, seed): the same run always has the same
key, whoever plans it, so a resumed sweep skips exactly the runs already stored and never stores
one twice (``run_key`` is the primary key of ``sweep_runs``).
"""
import hashlib

from .spec import canonical


def run_key(sweep_id, settings, seed):
    text = f"{sweep_id}\x00{canonical(settings)}\x00{seed}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def plan(sweep, cells, done=frozenset()):
    """The runs still to do, in run_no order: tuples (run_no, run_key, cell_id, seed)."""
    first, count = sweep["seeds"]["first"], sweep["seeds"]["count"]
    out = []
    for cell in cells:
        base = cell["cell_id"] * count
        for i in range(count):
            run_no = base + i
            if run_no in done:
                continue
            seed = first + i
            out.append((run_no, run_key(sweep["id"], cell["settings"], seed), cell["cell_id"], seed))
    return out


def total_runs(sweep, cells):
    return len(cells) * sweep["seeds"]["count"]


def chunks(rows, size):
    for start in range(0, len(rows), size):
        yield rows[start:start + size]

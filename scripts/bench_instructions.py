#!/usr/bin/env python3
"""Instructions of bench-medium's first run in a fresh PyPy process, per source tree (a benchmark
script): a figure that repeats to 0.02% from run to run, where wall time on this shared 2-core
machine moves by 5-15% between identical runs.

Each tree (a checkout of this repository: the baseline first, then the trees to compare) runs
``Simulation(reference_scenario()).advance_to(60000)`` once in ``pypy3`` under Valgrind's
cachegrind (``--cache-sim=no``: instructions only, ~25x slower than the run itself). The count
covers everything the process does: interpreting, PyPy's JIT tracing and compiling, the code it
compiled, and the collector; the fixed cost of starting PyPy and importing the engine is
measured once (``--startup``) and can be taken off. PyPy's choices are deterministic here (a
fixed hash seed, the sweep workers' 32 MB nursery), so a change of 1% is a real change.

It does not replace wall time: instructions do not see cache misses, and a larger nursery or a
different memory layout can move wall time without moving them. Confirm a gain with
``python -m engine bench`` in alternated runs before claiming it (docs/performance.md).

    .venv/bin/python scripts/bench_instructions.py /path/to/base-worktree .
    .venv/bin/python scripts/bench_instructions.py --jobs 1 --startup .

Needs ``valgrind`` and ``pypy3`` (Debian: ``apt-get install valgrind pypy3``).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

RUN = ("from engine.tools.bench import reference_scenario\n"
       "from engine.simulation import Simulation\n"
       "Simulation(reference_scenario()).advance_to(60000)\n")
STARTUP = "import engine.simulation, engine.tools.bench\n"


def count(tree, code):
    """Instructions (cachegrind's ``I refs``) of ``pypy3 -c code`` with ``tree`` on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=os.path.abspath(tree), PYTHONHASHSEED="0", PYPY_GC_NURSERY="32M")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--smc-check=all-non-file",
             f"--cachegrind-out-file={tmp}/out", "pypy3", "-c", code],
            env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if not found:
        sys.exit(f"bench_instructions: no instruction count from valgrind for {tree}")
    return int(found.group(1).replace(",", ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", help="source trees; the first is the baseline")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="valgrind processes at once (instructions do not depend on it)")
    parser.add_argument("--startup", action="store_true",
                        help="also count starting PyPy and importing the engine (first tree)")
    args = parser.parse_args()
    for tool in ("valgrind", "pypy3"):
        if not shutil.which(tool):
            sys.exit(f"bench_instructions: needs {tool} on the PATH (apt-get install {tool})")
    jobs = [(tree, RUN) for tree in args.trees]
    if args.startup:
        jobs.append((args.trees[0], STARTUP))
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        counts = list(pool.map(lambda job: count(*job), jobs))
    base = counts[0]
    print("bench-medium, first run in a fresh PyPy process: instructions (cachegrind)")
    for tree, n in zip(args.trees, counts):
        print(f"  {n / 1e9:8.3f} G  {n / base:6.3f}x the baseline  {tree}")
    if args.startup:
        startup = counts[-1]
        print(f"  {startup / 1e9:8.3f} G  starting PyPy and importing the engine (in every figure above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Times of counterexample search and shrinking for the two cases of issue 6.

    .venv/bin/python scripts/bench_search.py [--runs-safe 200] [--no-spark]

Case 1: "0.10", RF 2, acks=all, default fault profile: search until a loss, then shrink it.
Case 2: "2.6", acks=all, min.insync.replicas=2, unclean off, process crashes only: search the
whole run budget (nothing is found). Both in this process and on Spark (local[*]).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from app.counterexample import finder  # noqa: E402
from engine.tools.cli import tune_gc  # noqa: E402
from engine.tools.search import shrink  # noqa: E402
from engine.tools.search_examples import LOSSY_0_10 as OLD  # noqa: E402
from engine.tools.search_examples import PROCESS_CRASHES_ONLY as CRASHES
from engine.tools.search_examples import SAFE_2_6 as SAFE

PROP = {"name": "no_acked_loss"}


def case(label, base, profile, runs, spark):
    started = time.perf_counter()
    found = finder.find(base, PROP, profile, runs=runs, spark=spark)
    search_s = time.perf_counter() - started
    line = f"{label:34s} search {search_s:6.1f} s over {found['runs']:4d} runs ({found['runs'] / search_s:5.1f} runs/s)"
    if found["found"]:
        from engine.tools.search import candidate
        started = time.perf_counter()
        small, evaluations = shrink(candidate(base, profile, found["seed"]), PROP)
        line += (f"; found at seed {found['seed']}; shrink {time.perf_counter() - started:5.1f} s, "
                 f"{evaluations} runs -> {len(small['timeline'])} operation(s)")
    else:
        line += "; not found"
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs-safe", type=int, default=200)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    tune_gc()
    case("0.10 RF2 acks=all, in process", OLD, None, 500, None)
    case("2.6 safe settings, in process", SAFE, CRASHES, args.runs_safe, None)
    if not args.no_spark:
        from app.spark.session import build_session
        started = time.perf_counter()
        spark = build_session()
        print(f"Spark session start {time.perf_counter() - started:.1f} s "
              f"(parallelism {spark.sparkContext.defaultParallelism})", flush=True)
        case("0.10 RF2 acks=all, on Spark", OLD, None, 500, spark)
        case("2.6 safe settings, on Spark", SAFE, CRASHES, args.runs_safe, spark)
        spark.stop()


if __name__ == "__main__":
    main()

"""``python -m app search BASE.json``: find, shrink and save a counterexample from the shell."""
import argparse
import json
import sys

from engine.cli import parse_property, read_scenario
from engine.scenario import ScenarioError

from .service import hunt


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m app search",
                                     description="Can these settings break a property? Search fault "
                                                 "schedules on Spark, shrink what breaks it, save it.")
    parser.add_argument("scenario", help="base scenario JSON file or library scenario name")
    parser.add_argument("--property", default="no_acked_loss",
                        help="no_acked_loss (default), no_acked_all_loss, no_violation, invariant=NAME, "
                             "max_offline_ms=N, no_error=KAFKA_ERROR")
    parser.add_argument("--runs", type=int, default=500, help="run budget (default 500)")
    parser.add_argument("--budget-s", type=int, default=600, help="time budget in seconds")
    parser.add_argument("--profile", help="fault profile JSON file: {kind: [rate/min, min ms, max ms]}")
    parser.add_argument("--master", help="Spark master (default local[*])")
    parser.add_argument("--no-spark", action="store_true", help="search in this process")
    parser.add_argument("--db", help="store URL (default: the app's SQLite file)")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = parser.parse_args(argv)
    base = read_scenario(args.scenario)
    profile = None
    if args.profile:
        with open(args.profile, encoding="utf-8") as handle:
            profile = {k: tuple(v) for k, v in json.load(handle).items()}
    spark = None
    if not args.no_spark:
        from app.spark.session import build_session
        spark = build_session(master=args.master)
    store = None
    if not args.no_save:
        from app.store.db import open_store
        store = open_store(args.db)

    def progress(update):
        if "done" in update:
            print(f"\rsearched {update['done']}/{update['total']} runs in {update['elapsed_s']:.1f} s",
                  end="", file=sys.stderr, flush=True)
        elif update.get("stage") == "shrinking":
            print("\nshrinking...", file=sys.stderr, flush=True)
    try:
        report = hunt(base, parse_property(args.property), profile, runs=args.runs,
                      budget_s=args.budget_s, spark=spark, store=store, progress=progress)
    except (ScenarioError, ValueError) as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2
    print(file=sys.stderr)
    if args.json:
        print(json.dumps(report))
        return 0 if report["found"] else 1
    print(report["message"])
    if not report["found"]:
        return 1
    print(f"shrunk from {report['original_operations']} to {report['operations']} operation(s) "
          f"with {report['shrink']['evaluations']} runs in {report['shrink']['elapsed_s']} s")
    for step in report["narration"]:
        print(f"{step['step']:>3}. {step['t_ms']:>7} ms  {step['text']}")
    if "run" in report:
        print(f"saved as run {report['run']['id']}: open {report['run']['link']}")
    return 0

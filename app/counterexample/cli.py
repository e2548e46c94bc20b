"""``isrlab search BASE.json``: find, shrink and save a counterexample from the shell."""
import json
import sys
from types import SimpleNamespace

import click

from app.commandline import Progress, invoke, progress_option
from engine.tools.cli import parse_property, read_scenario
from engine.scenario.document import ScenarioError

from .service import hunt


@click.command("search")
@click.argument("scenario")
@click.option("--property", "property_", default="no_acked_loss", show_default=True,
              help="no_acked_loss, no_acked_all_loss, no_violation, invariant=NAME, max_offline_ms=N, "
                   "no_error=KAFKA_ERROR")
@click.option("--runs", type=int, default=500, show_default=True, help="run budget")
@click.option("--budget-s", type=int, default=600, show_default=True, help="time budget in seconds")
@click.option("--profile", help="fault profile JSON file: {kind: [rate/min, min ms, max ms]}")
@click.option("--master", help="Spark master (default local[*])")
@click.option("--no-spark", is_flag=True, help="search in this process")
@click.option("--db", help="store URL (default: the app's SQLite file)")
@click.option("--no-save", is_flag=True, help="do not save the counterexample as a run")
@click.option("--json", "as_json", is_flag=True, help="print the whole report as JSON")
@progress_option()
def search_command(**params):
    """Can these settings break a property? Search fault schedules of SCENARIO (a JSON file or a
    library scenario name) on Spark, shrink what breaks it, save it."""
    params["property"] = params.pop("property_")
    params["json"] = params.pop("as_json")
    return search(SimpleNamespace(**params))


def main(argv=None):
    """``python -m app search ...`` (kept for scripts and tests)."""
    return invoke(search_command, sys.argv[1:] if argv is None else argv, "isrlab search")


def search(args):
    base = read_scenario(args.scenario)
    profile = None
    if args.profile:
        with open(args.profile, encoding="utf-8") as handle:
            profile = {k: tuple(v) for k, v in json.load(handle).items()}
    progress = Progress(args.progress)
    spark = None
    if not args.no_spark:
        from app.spark.session import build_session
        progress({"stage": "starting Spark"})        # ~7-17 s of JVM start: say so, not a frozen bar
        spark = build_session(master=args.master)
    store = None
    if not args.no_save:
        from app.store.db import open_store
        store = open_store(args.db)
    try:
        report = hunt(base, parse_property(args.property), profile, runs=args.runs,
                      budget_s=args.budget_s, spark=spark, store=store, progress=progress)
    except (ScenarioError, ValueError) as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2
    progress.close()
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

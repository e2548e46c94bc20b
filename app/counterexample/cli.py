"""``isrlab search BASE.json``: find, shrink and save a counterexample from the shell."""
import json
import sys
from types import SimpleNamespace

import click

from app.commandline import Progress, invoke, progress_option
from app.i18n.command_line import error_text
from app.i18n.job_text import localized_report
from app.i18n.text import lazy as _, _ as tr
from engine.tools.cli import parse_property, read_scenario
from engine.scenario.document import ScenarioError

from .service import hunt


@click.command("search", help=_("Can these settings break a property? Search fault schedules of SCENARIO (a "
                                "JSON file or a library scenario name) on Spark, shrink what breaks it, save "
                                "it."))
@click.argument("scenario")
@click.option("--property", "property_", default="no_acked_loss", show_default=True,
              help=_("no_acked_loss, no_acked_all_loss, no_violation, invariant=NAME, max_offline_ms=N, "
                     "no_error=KAFKA_ERROR"))
@click.option("--runs", type=int, default=500, show_default=True, help=_("run budget"))
@click.option("--budget-s", type=int, default=600, show_default=True, help=_("time budget in seconds"))
@click.option("--profile", help=_("fault profile JSON file: {kind: [rate/min, min ms, max ms]}"))
@click.option("--master", help=_("Spark master (default local[*])"))
@click.option("--no-spark", is_flag=True, help=_("search in this process"))
@click.option("--db", help=_("store URL (default: the app's SQLite file)"))
@click.option("--no-save", is_flag=True, help=_("do not save the counterexample as a run"))
@click.option("--json", "as_json", is_flag=True, help=_("print the whole report as JSON"))
@progress_option()
def search_command(**params):
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
        print("\n" + tr("error: %(error)s", error=error_text(exc) if isinstance(exc, ScenarioError) else exc),
              file=sys.stderr)
        return 2
    progress.close()
    if args.json:
        print(json.dumps(report))
        return 0 if report["found"] else 1
    report = localized_report(report)     # the verdict and the steps in the process's language
    print(report["message"])
    if not report["found"]:
        return 1
    print(tr("shrunk from %(before)s to %(after)s operation(s) with %(runs)s runs in %(s)s s",
             before=report["original_operations"], after=report["operations"],
             runs=report["shrink"]["evaluations"], s=report["shrink"]["elapsed_s"]))
    for step in report["narration"]:
        print(f"{step['step']:>3}. {step['t_ms']:>7} ms  {step['text']}")
    if "run" in report:
        print(tr("saved as run %(id)s: open %(link)s", id=report["run"]["id"], link=report["run"]["link"]))
    return 0

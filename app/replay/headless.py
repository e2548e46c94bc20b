"""``isrlab run SCENARIO [--save] [--db URL] [--title T] [--seed N] [--index]``: run a
scenario without the web server and (optionally) save it as a run.

SCENARIO is a JSON file or the name of a library scenario. Prints the outcome (records acked /
failed / lost, violations); with ``--save`` the run is saved in one transaction and its id and
short link are printed; ``--index`` also builds its seek index now (otherwise the first replay
builds it). ``--json`` prints one JSON object instead. Exit status: 0, or 2 for an invalid
scenario or an unreadable file. The engine itself stays free of the store: this module runs the
simulation and hands the facts over.
"""
import json
import sys
import time
from types import SimpleNamespace

import click

from app.commandline import invoke
from app.i18n.command_line import error_text
from app.i18n.text import lazy as _, _ as tr
from engine.tools.cli import read_scenario, tune_gc
from engine.scenario.document import ScenarioError
from engine.simulation import ENGINE_VERSION, Simulation

from .save import capture_result, save_captured


def run_headless(doc, engine_version=None):
    """(simulation, result, wall ms) of one straight run (``engine_version``: None = the current
    engine; an old run's version re-simulates it as that engine did, docs/model.md §19)."""
    started = time.perf_counter()
    sim = Simulation(doc, engine_version=engine_version)
    result = sim.run()
    return sim, result, round((time.perf_counter() - started) * 1000)


@click.command("run", help=_("Run SCENARIO (a JSON file, or the name of a library scenario) without the web "
                             "server, and optionally save it as a run."))
@click.argument("scenario")
@click.option("--save", is_flag=True, help=_("save the run in the store"))
@click.option("--db", help=_("database URL (default: the app's DATABASE_URL / instance/isrlab.db)"))
@click.option("--title", help=_("title of the saved run (default: the scenario's name)"))
@click.option("--seed", type=int, help=_("override the scenario's seed"))
@click.option("--index", is_flag=True, help=_("with --save: build the seek index now"))
@click.option("--json", "as_json", is_flag=True, help=_("print one JSON object"))
def run_command(**params):
    params["json"] = params.pop("as_json")
    return run(SimpleNamespace(**params))


def main(argv=None):
    """``python -m app run ...`` (kept for scripts and tests)."""
    return invoke(run_command, sys.argv[1:] if argv is None else argv, "isrlab run")


def run(args):
    tune_gc()
    doc = read_scenario(args.scenario)
    if args.seed is not None and isinstance(doc, dict):
        doc = {**doc, "seed": args.seed}
    try:
        sim, result, wall_ms = run_headless(doc)
    except ScenarioError as exc:
        print(tr("error: invalid scenario: %(error)s", error=error_text(exc)), file=sys.stderr)
        return 2
    captured = capture_result(sim, result)
    out = {"name": sim.scenario["name"], "kafka_version": sim.scenario["kafka_version"],
           "seed": sim.scenario["seed"], "engine_version": sim.engine_version, "end_ms": result["end_ms"],
           "events": len(result["history"]), "wall_ms": wall_ms, **captured["summary"]}
    if args.save:
        from ..store import db
        try:
            engine = db.open_store(args.db)
            saved = save_captured(engine, captured, title=args.title, source="headless")
        except Exception as exc:  # noqa: BLE001 - a database problem is reported, not a traceback
            from ..store.errors import StoreError
            if isinstance(exc, StoreError):
                print(f"error: {exc}", file=sys.stderr)
                return 2
            raise
        out.update(run_id=saved["id"], slug=saved["slug"], link=f"/s/{saved['slug']}", save_ms=saved["save_ms"])
        if args.index:
            out["index_ms"] = _build_index(engine, saved["id"])
    if args.json:
        print(json.dumps(out))
    else:
        print(tr("%(name)s (kafka_version %(version)s, seed %(seed)s): %(end)s ms simulated in %(wall)s ms, "
                 "%(events)s events", name=tr(out["name"]),           # a library story's title is a msgid
                 version=out["kafka_version"], seed=out["seed"],
                 end=out["end_ms"], wall=wall_ms, events=out["events"]))
        print(tr("records: %(total)s total, %(acked)s acked, %(failed)s failed, %(lost)s lost; violations: "
                 "%(violations)s", total=out["records_total"], acked=out["acked"], failed=out["failed"],
                 lost=out["lost"], violations=out["violations"]))
        if args.save:
            print(tr("saved: run %(id)s, link %(link)s (%(ms)s ms)", id=out["run_id"], link=out["link"],
                     ms=out["save_ms"]))
            if "index_ms" in out:
                print(tr("seek index built in %(ms)s ms", ms=out["index_ms"]))
    return 0


def _build_index(engine, run_id):
    from ..store.db import configured_instance_path
    from .service import ReplayService, snapshot_key
    started = time.perf_counter()
    service = ReplayService(engine, snapshot_key(configured_instance_path()))
    service.seeker(run_id)
    return round((time.perf_counter() - started) * 1000)


if __name__ == "__main__":
    sys.exit(main())

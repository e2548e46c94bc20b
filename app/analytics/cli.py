"""``isrlab sweep|analyze|resimulate``: the Spark jobs from the command line.

    isrlab sweep SWEEP.json [--db URL] [--master URL] [--chunk-runs N] [--pypy auto|off|PATH]
                            [--progress bar|json|none]
    isrlab analyze [--sweep ID ...] [--parquet DIR] [--db URL] [--master URL]
    isrlab analyze --corpus [--parquet DIR]      (stored events of every stored run, per source and era)
    isrlab resimulate [--sweep ID ...] [--no-saved] [--era 0.10] [--reset-config]
                      [--set KEY=VALUE ...] [--property NAME] [--param VALUE] [--db URL] [--master URL]

``--db`` is a SQLAlchemy URL of the store (default: ISRLAB_DATABASE_URL, else
instance/isrlab.db); ``--master`` any Spark master URL (default ``local[*]``). Running ``sweep``
again with the same document resumes it. Exit status 2 for invalid input (the message names
the field).
"""
import json
import sys
from types import SimpleNamespace

import click

from app.commandline import Progress, invoke, progress_option
from app.i18n.command_line import error_text
from app.i18n.text import lazy as _, _ as tr

EXIT_INVALID = 2


def _common(command):
    command = click.option("--master", help=_("Spark master URL (default local[*])"))(command)
    return click.option("--db", help=_("SQLAlchemy URL of the store (default: ISRLAB_DATABASE_URL or "
                                       "instance/isrlab.db)"))(command)


def _run(handler, params):
    from engine.tools.cli import tune_gc
    tune_gc()
    return handler(SimpleNamespace(**params))


@click.command("sweep", help=_("Run (or resume) a sweep DOCUMENT (a JSON file, or - for standard input) on "
                               "Spark."))
@click.argument("document")
@click.option("--chunk-runs", type=int, default=None, help=_("runs stored per chunk (resume granularity)"))
@click.option("--runs-per-task", type=int, default=None, help=_("runs per Spark task"))
@click.option("--pypy", default="auto", show_default=True,
              help=_("simulate in a PyPy worker per Spark Python worker: auto (where pypy3 is on the "
                     "node, else CPython; sweeps of fewer than 100 runs stay in CPython), off, or "
                     "the interpreter's path"))
@progress_option()
@click.option("--analyze", is_flag=True, help=_("run the analysis of this sweep afterwards"))
@_common
def sweep_command(**params):
    return _run(cmd_sweep, params)


@click.command("analyze", help=_("Aggregate stored sweeps into the result tables (loss probability, "
                                 "unavailability, ...)."))
@click.option("--sweep", multiple=True, help=_("sweep id (repeatable; default every sweep)"))
@click.option("--parquet", help=_("also write the results as Parquet under this folder"))
@click.option("--corpus", is_flag=True, help=_("instead: aggregate the stored events of every stored run "
                                               "(saved runs and sweep runs) per source and era"))
@_common
def analyze_command(**params):
    params["sweep"] = list(params["sweep"]) or None
    return _run(cmd_analyze, params)


@click.command("resimulate", help=_("Re-simulate stored runs (sweeps and saved runs) and ask them a question."))
@click.option("--sweep", multiple=True, help=_("only runs of these sweeps (default every sweep)"))
@click.option("--no-saved", is_flag=True, help=_("leave out saved runs (live, headless, imports...)"))
@click.option("--era", help=_('replay under another era\'s rules, e.g. "0.10"'))
@click.option("--reset-config", is_flag=True,
              help=_("with --era: take the new era's defaults too (default: keep each run's config)"))
@click.option("--set", "set_", multiple=True, metavar="KEY=VALUE",
              help=_("config override for the replay (JSON value), repeatable"))
@click.option("--property", default="no_acked_loss", show_default=True, help=_("the question (a property "
                                                                               "name)"))
@click.option("--param", help=_("the property's parameter (JSON value)"))
@click.option("--question", help=_("a question document (JSON file) instead of the flags"))
@_common
def resimulate_command(**params):
    return _run(cmd_resimulate, resim_args(params))


def resim_args(params):
    """click's parameters as the namespace ``question_from_args`` reads."""
    params = dict(params)
    params["set"] = list(params.pop("set_", ()) or ())
    params["sweep"] = list(params["sweep"]) or None
    return params


COMMANDS = (sweep_command, analyze_command, resimulate_command)


def _store(url):
    from app.store import db
    return db.open_store(url)


def _session(master):
    from app.spark.session import build_session
    return build_session(master)


def _read_json(path):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise SystemExit(f"error: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        print(tr("error: %(path)s is not valid JSON: %(error)s", path=path, error=exc), file=sys.stderr)
        raise SystemExit(EXIT_INVALID) from None


def cmd_sweep(args):
    from app.sweeps import execute, spec
    doc = _read_json(args.document)
    try:
        spec.validate(doc)          # fail fast, before a JVM starts
    except spec.SweepError as exc:
        print(tr("error: invalid sweep: %(error)s", error=error_text(exc)), file=sys.stderr)
        return EXIT_INVALID
    store = _store(args.db)
    progress = None if args.progress == "none" else Progress(args.progress)
    if progress:
        progress({"stage": "starting Spark"})
    spark = _session(args.master)
    kwargs = {}
    if args.chunk_runs:
        kwargs["chunk_runs"] = args.chunk_runs
    if args.runs_per_task:
        kwargs["runs_per_task"] = args.runs_per_task
    try:
        summary = execute.run_sweep(spark, store, doc, pypy=args.pypy, progress=progress, **kwargs)
    except spec.SweepError as exc:
        print(tr("error: %(error)s", error=error_text(exc)), file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps({"sweep": summary}))
    if args.analyze:
        from .job import analyze
        print(json.dumps({"analysis": analyze(spark, store, [summary["sweep_id"]], db_url=args.db)}))
    return 0


def cmd_analyze(args):
    from .job import analyze
    store = _store(args.db)
    spark = _session(args.master)
    if args.corpus:
        from .corpus import corpus_summary
        print(json.dumps({"corpus": corpus_summary(spark, store, db_url=args.db, parquet=args.parquet)}))
        return 0
    try:
        summary = analyze(spark, store, args.sweep, parquet=args.parquet, db_url=args.db)
    except ValueError as exc:
        print(tr("error: %(error)s", error=exc), file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps({"analysis": summary}))
    return 0


def question_from_args(args):
    if args.question:
        return _read_json(args.question)
    change = {}
    if args.era:
        change["kafka_version"] = args.era
        change["keep_config"] = not args.reset_config
    settings = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        try:
            settings[key] = json.loads(raw)
        except ValueError:
            settings[key] = raw
    if settings:
        change["set"] = settings
    prop = {"name": args.property}
    if args.param is not None:
        try:
            prop["param"] = json.loads(args.param)
        except ValueError:
            prop["param"] = args.param
    return {"property": prop, "what_if": change or None, "sweeps": args.sweep, "saved": not args.no_saved}


def cmd_resimulate(args):
    from .resim import QuestionError, ask, validate_question
    try:
        question = question_from_args(args)
        validate_question(question)
    except (QuestionError, ValueError) as exc:
        print(tr("error: invalid question: %(error)s",
                 error=error_text(exc) if isinstance(exc, QuestionError) else exc), file=sys.stderr)
        return EXIT_INVALID
    store = _store(args.db)
    spark = _session(args.master)
    summary = ask(spark, store, question, db_url=args.db)
    print(json.dumps({"resimulation": summary}))
    return 0


def main(argv=None):
    """``python -m app sweep|analyze|resimulate ...`` (kept for scripts and tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    by_name = {c.name: c for c in COMMANDS}
    if not argv or argv[0] not in by_name:
        print(f"error: expected one of {', '.join(by_name)}", file=sys.stderr)
        return EXIT_INVALID
    return invoke(by_name[argv[0]], argv[1:], f"isrlab {argv[0]}")

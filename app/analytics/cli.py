"""``python -m app sweep|analyze|resimulate``: the Spark jobs from the command line.

    python -m app sweep SWEEP.json [--db URL] [--master URL] [--chunk-runs N] [--progress bar|json|none]
    python -m app analyze [--sweep ID ...] [--parquet DIR] [--db URL] [--master URL]
    python -m app analyze --corpus [--parquet DIR]      (stored events of every stored run, per source and era)
    python -m app resimulate [--sweep ID ...] [--no-saved] [--era 0.10] [--reset-config]
                             [--set KEY=VALUE ...] [--property NAME] [--param VALUE] [--db URL] [--master URL]

``--db`` is a SQLAlchemy URL of the store (default: ISRLAB_DATABASE_URL, else
instance/isrlab.db); ``--master`` any Spark master URL (default ``local[*]``). Running ``sweep``
again with the same document resumes it. Exit status 2 for invalid input (the message names
the field).
"""
import argparse
import json
import sys
import time

EXIT_INVALID = 2


def _common(parser):
    parser.add_argument("--db", help="SQLAlchemy URL of the store (default: ISRLAB_DATABASE_URL or instance/isrlab.db)")
    parser.add_argument("--master", help="Spark master URL (default local[*])")


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m app", description="ISR Lab's Spark jobs")
    sub = parser.add_subparsers(dest="command", required=True)
    sweep = sub.add_parser("sweep", help="run (or resume) a sweep document on Spark")
    sweep.add_argument("document", help="sweep document (JSON file, or - for standard input)")
    sweep.add_argument("--chunk-runs", type=int, default=None, help="runs stored per chunk (resume granularity)")
    sweep.add_argument("--runs-per-task", type=int, default=None, help="runs per Spark task")
    sweep.add_argument("--progress", choices=("bar", "json", "none"), default="bar")
    sweep.add_argument("--analyze", action="store_true", help="run the analysis of this sweep afterwards")
    _common(sweep)
    analyze = sub.add_parser("analyze", help="aggregate stored sweeps into the result tables")
    analyze.add_argument("--sweep", action="append", help="sweep id (repeatable; default every sweep)")
    analyze.add_argument("--parquet", help="also write the results as Parquet under this folder")
    analyze.add_argument("--corpus", action="store_true",
                         help="instead: aggregate the stored events of every stored run (saved runs and sweep runs) "
                              "per source and era")
    _common(analyze)
    resim = sub.add_parser("resimulate", help="re-simulate stored runs and ask them a question")
    resim.add_argument("--sweep", action="append", help="only runs of these sweeps (default every sweep)")
    resim.add_argument("--no-saved", action="store_true", help="leave out saved runs (live, headless, imports...)")
    resim.add_argument("--era", help='replay under another era\'s rules, e.g. "0.10"')
    resim.add_argument("--reset-config", action="store_true",
                       help="with --era: take the new era's defaults too (default: keep each run's config)")
    resim.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="config override for the replay (JSON value), repeatable")
    resim.add_argument("--property", default="no_acked_loss", help="the question (a property name)")
    resim.add_argument("--param", help="the property's parameter (JSON value)")
    resim.add_argument("--question", help="a question document (JSON file) instead of the flags")
    _common(resim)
    return parser


def _store(url):
    from app.store import db
    return db.open_store(url)


def _session(master):
    from app.spark.session import build_session
    return build_session(master)


class Bar:
    """A one-line progress bar on standard error: runs done, rate, time left."""

    def __init__(self, stream=sys.stderr, width=30, every_s=0.5, clock=time.monotonic):
        self.stream, self.width, self.every_s, self.clock = stream, width, every_s, clock
        self.last = 0.0

    def __call__(self, p):
        now = self.clock()
        if now - self.last < self.every_s and p["done"] < p["total"]:
            return
        self.last = now
        self.stream.write("\r" + render_bar(p, self.width))
        if p["done"] >= p["total"]:
            self.stream.write("\n")
        self.stream.flush()


def render_bar(p, width=30):
    total = max(p["total"], 1)
    filled = int(width * p["done"] / total)
    eta = "--:--" if p["eta_s"] is None else time.strftime("%H:%M:%S", time.gmtime(p["eta_s"]))
    return (f"[{'#' * filled}{'.' * (width - filled)}] {p['done']}/{p['total']} runs "
            f"{p['rate_per_s']:.1f} runs/s, {eta} left")


def json_progress(p):
    sys.stdout.write(json.dumps({"progress": {k: (round(v, 3) if isinstance(v, float) else v)
                                              for k, v in p.items()}}) + "\n")
    sys.stdout.flush()


def _read_json(path):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise SystemExit(f"error: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        print(f"error: {path} is not valid JSON: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID) from None


def cmd_sweep(args):
    from app.sweeps import execute, spec
    doc = _read_json(args.document)
    try:
        spec.validate(doc)          # fail fast, before a JVM starts
    except spec.SweepError as exc:
        print(f"error: invalid sweep: {exc}", file=sys.stderr)
        return EXIT_INVALID
    store = _store(args.db)
    spark = _session(args.master)
    progress = {"bar": Bar(), "json": json_progress, "none": None}[args.progress]
    kwargs = {}
    if args.chunk_runs:
        kwargs["chunk_runs"] = args.chunk_runs
    if args.runs_per_task:
        kwargs["runs_per_task"] = args.runs_per_task
    try:
        summary = execute.run_sweep(spark, store, doc, db_url=args.db, progress=progress, **kwargs)
    except spec.SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
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
        print(f"error: {exc}", file=sys.stderr)
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
        print(f"error: invalid question: {exc}", file=sys.stderr)
        return EXIT_INVALID
    store = _store(args.db)
    spark = _session(args.master)
    summary = ask(spark, store, question, db_url=args.db)
    print(json.dumps({"resimulation": summary}))
    return 0


COMMANDS = {"sweep": cmd_sweep, "analyze": cmd_analyze, "resimulate": cmd_resimulate}


def main(argv=None):
    args = build_parser().parse_args(argv)
    from engine.cli import tune_gc
    tune_gc()
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

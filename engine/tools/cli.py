"""``python -m engine run SCENARIO.json [--trace FILE]``, ``python -m engine zk-trace SCENARIO.json``
and ``python -m engine bench``.

The command line is the engine's only contact with the outside world (files, the wall clock for
``stats.wall_ms``); the simulation itself never reads either.
"""
import argparse
import gc
import json
import sys
import time

from engine.scenario.document import ScenarioError
from engine.simulation import Simulation


def tune_gc():
    """A run allocates millions of small long-lived objects (history, records); CPython's default
    collection thresholds then spend a third of the time rescanning them. Collect less often.
    (PyPy's incremental collector has no thresholds to set: nothing to do there.)"""
    if hasattr(gc, "set_threshold"):
        gc.set_threshold(100_000, 50, 1000)


def main(argv=None):
    tune_gc()
    parser = argparse.ArgumentParser(prog="python -m engine",
                                     description="ISR Lab: a deterministic simulator of Kafka replication")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario and print the result document")
    run.add_argument("scenario", help="scenario JSON file, or the name of a library scenario")
    run.add_argument("--trace", help="write every history event as one JSON object per line")
    run.add_argument("--seed", type=int, help="override the scenario's seed")
    run.add_argument("--summary", action="store_true",
                     help="print the story (history without HW moves) instead of the full document")
    sub.add_parser("list", help="list the library scenarios")
    find = sub.add_parser("search", help="search fault schedules for a run that breaks a property, "
                                          "then shrink it (single process; the app runs it on Spark)")
    find.add_argument("scenario", help="base scenario JSON file or library name (its timeline is kept)")
    find.add_argument("--property", default="no_acked_loss",
                      help="no_acked_loss (default), no_acked_all_loss, no_violation, "
                           "invariant=NAME, max_offline_ms=N, no_error=KAFKA_ERROR")
    find.add_argument("--runs", type=int, default=200)
    find.add_argument("--first-seed", type=int, default=0)
    find.add_argument("--no-shrink", action="store_true")
    trace = sub.add_parser("zk-trace", help="print every call the engine's ZooKeeper receives, "
                                             "as JSON lines (docs/model.md §9.10e)")
    trace.add_argument("scenario", help="scenario JSON file, or the name of a library scenario")
    trace.add_argument("--kafka-version", help="run the scenario in another era")
    sub.add_parser("worker", help="simulate sweep runs sent as JSON lines on standard input "
                                  "(what a sweep's Spark task runs under PyPy)")
    bench = sub.add_parser("bench", help="run the reference workload and print speed figures")
    bench.add_argument("--duration-ms", type=int, default=60000)
    bench.add_argument("--pypy", default="auto",
                       help="from CPython, measure again under PyPy: auto (pypy3 on the PATH, the "
                            "default), off, or an interpreter's path")
    bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "search":
        return _search(args)
    if args.command == "zk-trace":
        from engine.zookeeper.trace import print_trace
        doc = read_scenario(args.scenario)
        if args.kafka_version and isinstance(doc, dict):
            doc = {**doc, "kafka_version": args.kafka_version}
        try:
            print_trace(doc, sys.stdout)
        except ScenarioError as exc:
            print(f"error: invalid scenario: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "worker":
        from engine.tools.worker import main as worker_main
        return worker_main()
    if args.command == "list":
        from engine.scenario.library import library
        for name, doc in library().items():
            print(f"{name:40s} {doc['name']}")
        return 0
    from engine.tools.bench import run_bench
    return run_bench(args.duration_ms, args.pypy, args.json)


def read_scenario(path):
    """A library scenario by name, or a JSON file; a clear exit message when neither works."""
    from engine.scenario.library import library
    lib = library()
    if path in lib:
        return lib[path]
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise SystemExit(f"error: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise SystemExit(f"error: {path} is not valid JSON: {exc}") from None


def _run(args):
    doc = read_scenario(args.scenario)
    if args.seed is not None and isinstance(doc, dict):
        doc = {**doc, "seed": args.seed}
    trace_file = open(args.trace, "w", encoding="utf-8") if args.trace else None
    trace = None
    if trace_file:
        def trace(event):
            trace_file.write(_ENCODE(event) + "\n")
    started = time.perf_counter()
    try:
        sim = Simulation(doc, trace=trace)
    except ScenarioError as exc:
        print(f"error: invalid scenario: {exc}", file=sys.stderr)
        return 2
    result = sim.run()
    result["stats"]["wall_ms"] = round((time.perf_counter() - started) * 1000)
    if trace_file:
        trace_file.close()
    if args.summary:
        print(story(result))
    else:
        write_json(result, sys.stdout)
        sys.stdout.write("\n")
    return 0


#: the C encoder (``json.dumps``/``encode``); ``json.dump`` always takes the pure-Python
#: streaming encoder, which was ~45% of a ``run``'s wall time
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
STREAM_SLICE = 2000


def write_json(value, out, slice_len=STREAM_SLICE):
    """Write ``value`` exactly as ``json.dumps(value, separators=(",", ":"))`` would, with the C
    encoder, but piece by piece: a top-level dict key by key and a long list in slices of
    ``slice_len`` items, so a large result (a long history) is never held a second time as one
    string. Only the top level is split: recursing into small nested dicts cost more in Python
    calls than it saved (measured: 0.57 s vs 0.38 s for a 3 MB result)."""
    if not isinstance(value, dict):
        return _write_value(value, out, slice_len)
    out.write("{")
    for i, (key, item) in enumerate(value.items()):
        # json.dumps turns int/float/bool/None keys into strings ("1", "true", "null")
        out.write(("," if i else "") + _ENCODE(key if isinstance(key, str) else _ENCODE(key)) + ":")
        _write_value(item, out, slice_len)
    out.write("}")


def _write_value(value, out, slice_len):
    if isinstance(value, list) and len(value) > slice_len:
        out.write("[")
        for start in range(0, len(value), slice_len):
            out.write(("," if start else "") + _ENCODE(value[start:start + slice_len])[1:-1])
        out.write("]")
    else:
        out.write(_ENCODE(value))


def parse_property(text):
    name, _, param = text.partition("=")
    if name == "max_offline_ms" and param:
        param = int(param)
    return {"name": name, "param": param or None}


def _search(args):
    from engine.tools.search import check, narrate, search, shrink
    base = read_scenario(args.scenario)
    prop = parse_property(args.property)
    try:
        found = search(base, prop, runs=args.runs, first_seed=args.first_seed)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not found["found"]:
        print(f"not found in {found['runs']} runs")
        return 1
    scenario = found["scenario"]
    print(f"found in run {found['runs']} (seed {found['seed']}): {found['evidence']['detail']}")
    if not args.no_shrink:
        scenario, evaluations = shrink(scenario, prop)
        print(f"shrunk with {evaluations} runs to {len(scenario['timeline'])} operation(s)")
    broken, evidence, result = check(scenario, prop)
    for step in narrate(result, evidence):
        print(f"{step['step']:>3}. {step['t_ms']:>7} ms  {step['text']}")
    print(json.dumps(scenario))
    return 0


def story(result):
    """A readable account: the replication story, the violations and the record outcome."""
    lines = [f"{result['scenario']['name']} (kafka_version {result['scenario']['kafka_version']}, "
             f"seed {result['scenario']['seed']})"]
    for event in result["history"]:
        if event["type"] == "high_watermark":
            continue
        where = ""
        if event.get("topic") is not None and event.get("partition") is not None:
            where = f" {event['topic']}-{event['partition']}"
        who = f" broker {event['broker']}" if event.get("broker") is not None else ""
        lines.append(f"{event['t_ms']:>9} ms  {event['type']}{where}{who}: {event.get('reason', '')}")
    counts = {}
    for rec in result["records"]:
        label = rec["status"] + (f" {rec['error']}" if rec["error"] else "") + (" LOST" if rec["lost"] else "")
        counts[label] = counts.get(label, 0) + 1
    lines.append("records: " + ", ".join(f"{n} {label}" for label, n in sorted(counts.items())))
    lines.append(f"violations: {len(result['violations'])}")
    for v in result["violations"]:
        lines.append(f"  {v['t_ms']} ms {v['invariant']} {v['topic']}-{v['partition']}: {v['detail']}")
    return "\n".join(lines)

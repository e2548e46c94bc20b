"""Speed of saved runs: seek in a one-hour run, save a one-hour run, list 10,000 runs.

    .venv/bin/python scripts/bench_store.py [--db URL] [--seeks 200] [--check 20] [--runs 10000]

1. Simulates a one-hour run (3 brokers, 3 partitions at RF 3, a producer at 20 records/s with
   acks=all, a consumer, a broker crash and restart) and saves it (``save_captured``: one
   transaction with the run, its history and violations).
2. Builds the run's seek index (as the first replay does) and saves it.
3. Opens the run as a restarted server would (loads the index from the store, verifying every
   signature), then seeks to ``--seeks`` random moments, each from scratch (no cursor: restore the
   nearest snapshot, re-simulate to t, compute the cluster view). ``--check`` of them are compared
   with a straight run (exactness).
4. Adds ``--runs`` saved runs (bulk insert of run rows) and times the runs page queries.

Prints one line per figure and a JSON summary at the end. Default database: SQLite in a
temporary folder.
"""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import insert  # noqa: E402

from app.replay.save import capture_result, save_captured  # noqa: E402
from app.replay.service import ReplayService  # noqa: E402
from app.store import db, runs  # noqa: E402
from app.store.models import Run  # noqa: E402
from engine.tools.cli import tune_gc  # noqa: E402
from engine.simulation import Simulation  # noqa: E402
from engine.view import cluster_view  # noqa: E402

HOUR_MS = 3_600_000
SCENARIO = {
    "name": "one hour, 3 brokers, 20 records/s", "seed": 7, "kafka_version": "2.6", "brokers": 3,
    "topics": [{"name": "orders", "partitions": 3, "replication_factor": 3}],
    "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all", "rate_per_s": 20},
                {"name": "c1", "type": "consumer", "topic": "orders"}],
    "timeline": [{"at_ms": 900_000, "op": "crash", "broker": 1},
                 {"at_ms": 1_000_000, "op": "restart", "broker": 1},
                 {"at_ms": 2_400_000, "op": "pause", "broker": 2, "for_ms": 40_000}],
    "duration_ms": HOUR_MS,
}


def ms(seconds):
    return round(seconds * 1000, 1)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="database URL (default: SQLite in a temporary folder)")
    parser.add_argument("--seeks", type=int, default=200)
    parser.add_argument("--check", type=int, default=20, help="seeks compared with a straight run")
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args(argv)
    tune_gc()
    folder = tempfile.mkdtemp(prefix="isrlab-bench-")
    url = args.db or f"sqlite:///{folder}/bench.db"
    engine = db.open_store(url)
    out = {"database": engine.dialect.name, "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
           "cpus": os.cpu_count()}
    print(f"machine: {os.cpu_count()} cores, load average {out['load_average_at_start']} "
          "(other work on the machine inflates wall times; CPU times are also reported)")

    started = time.perf_counter()
    sim = Simulation(SCENARIO)
    result = sim.run()
    out["simulate_hour_ms"] = ms(time.perf_counter() - started)
    out["history_events"] = len(result["history"])
    out["records"] = len(result["records"])
    print(f"one-hour run simulated in {out['simulate_hour_ms']} ms: {out['history_events']} history events, "
          f"{out['records']} records")

    captured = capture_result(sim, result)
    del result, sim
    save_ms = []
    for _ in range(3):
        started = time.perf_counter()
        saved = save_captured(engine, captured, title="bench: one hour", source="headless")
        save_ms.append(ms(time.perf_counter() - started))
    out["save_hour_ms"] = min(save_ms)
    out["save_hour_ms_all"] = save_ms
    print(f"save one-hour run ({len(captured['events'])} events, one transaction each): "
          f"{', '.join(str(x) for x in save_ms)} ms")

    key = os.urandom(32)
    builder = ReplayService(engine, key)
    started = time.perf_counter()
    seeker = builder.seeker(saved["id"])
    out["index_build_ms"] = ms(time.perf_counter() - started)
    index = runs.seek_index(engine, saved["id"], "1.0.0") or {}
    out["snapshots"] = len(seeker.times)
    out["index_bytes"] = index.get("bytes")
    out["index_share"] = seeker.info["share"]
    out["history_matches"] = seeker.info["history_matches"]
    gaps = [b - a for a, b in zip(seeker.times, seeker.times[1:])]
    print(f"seek index: built in {out['index_build_ms']} ms, {out['snapshots']} snapshots "
          f"(every {min(gaps)}-{max(gaps)} ms of simulated time), {round(out['index_bytes'] / 1e6, 1)} MB, "
          f"sharing {out['index_share']}, history matches: {out['history_matches']}")
    del builder, seeker

    server = ReplayService(engine, key)             # a restarted server opening the run
    started = time.perf_counter()
    seeker = server.seeker(saved["id"])
    out["open_ms"] = ms(time.perf_counter() - started)
    print(f"open the run on a restarted server (load + verify the index): {out['open_ms']} ms")
    rng = random.Random(1)
    times = [rng.randrange(0, HOUR_MS + 1) for _ in range(args.seeks)]
    seek_ms, seek_cpu = [], []
    for t in times:
        started, cpu = time.perf_counter(), time.thread_time()
        view = server.view(saved["id"], t_ms=t, keep=False)   # no cursor: restore + re-simulate + view
        seek_ms.append(ms(time.perf_counter() - started))
        seek_cpu.append(ms(time.thread_time() - cpu))
        assert view["t_ms"] == t
    # first seek to each snapshot also reads and verifies its state from the store; report both
    out["seek_p50_ms"], out["seek_p95_ms"], out["seek_max_ms"] = \
        statistics.median(seek_ms), pct(seek_ms, 95), max(seek_ms)
    out["seek_cpu_p50_ms"], out["seek_cpu_p95_ms"], out["seek_cpu_max_ms"] = \
        statistics.median(seek_cpu), pct(seek_cpu, 95), max(seek_cpu)
    print(f"seek to a random moment ({args.seeks} seeks): p50 {out['seek_p50_ms']} ms, "
          f"p95 {out['seek_p95_ms']} ms, max {out['seek_max_ms']} ms "
          f"(CPU time: p50 {out['seek_cpu_p50_ms']}, p95 {out['seek_cpu_p95_ms']}, max {out['seek_cpu_max_ms']} ms)")
    warm = []
    for t in times[:50]:
        started = time.perf_counter()
        server.view(saved["id"], t_ms=t, keep=False)
        warm.append(ms(time.perf_counter() - started))
    out["seek_warm_p50_ms"], out["seek_warm_max_ms"] = statistics.median(warm), max(warm)
    print(f"seek again (snapshot states cached): p50 {out['seek_warm_p50_ms']} ms, max {out['seek_warm_max_ms']} ms")

    if args.check:
        checked = sorted(rng.sample(times, min(args.check, len(times))))
        straight = Simulation(captured["scenario"])
        for t in checked:
            straight.advance_to(t)
            assert server.view(saved["id"], t_ms=t, keep=False)["view"] == cluster_view(straight), f"seek to {t} differs"
        out["exact_checks"] = len(checked)
        print(f"exactness: {len(checked)} seeks equal a straight run")

    # the runs page with many runs
    base = runs.get_run(engine, saved["id"])
    row = {k: base[k] for k in ("scenario_name", "kafka_version", "seed", "engine_version", "scenario_sha256",
                                "duration_ms", "brokers", "partitions")}
    row["scenario_json"] = "{}"
    rng = random.Random(2)
    rows = []
    for i in range(args.runs - 1):
        lost = rng.random() < 0.2
        violations = rng.randrange(3) if rng.random() < 0.3 else 0
        rows.append(dict(row, slug=f"b{i:07d}", title=f"bench run {i} " + rng.choice(["kip-101", "acks=1", "zombie"]),
                         kafka_version=rng.choice(["0.10", "1.1", "2.0", "2.4", "2.6"]), source="headless",
                         scenario_name=rng.choice(["kip101", "acks1-loss", "zombie-leader", "isr-shrink"]),
                         created_ms=1_700_000_000_000 + i, end_ms=60000, finished=True, records_total=1200,
                         acked_count=1100, failed_count=100, lost_count=int(lost) * 7,
                         violations_count=violations, events_count=900,
                         outcome=runs.outcome_of(int(lost), violations)))
    with db.writing(engine) as conn:
        for start in range(0, len(rows), 2000):
            conn.execute(insert(Run.__table__), rows[start:start + 2000])
    queries = {
        "first page (50 newest) + total": {},
        "filter era + outcome": {"era": "0.10", "outcome": "lost"},
        "search text": {"q": "zombie"},
        "scenario name": {"scenario": "kip101"},
        "deep page (offset 9000)": {"offset": 9000},
    }
    out["list"] = {}
    for label, kw in queries.items():
        best = []
        for _ in range(5):
            started = time.perf_counter()
            page = runs.list_runs(engine, **kw)
            best.append(ms(time.perf_counter() - started))
        out["list"][label] = {"ms": statistics.median(best), "total": page["total"]}
        print(f"runs page, {label}: {statistics.median(best)} ms ({page['total']} of {args.runs} runs match)")
    started = time.perf_counter()
    everything, offset = [], 0
    while True:
        page = runs.list_runs(engine, limit=500, offset=offset)
        everything.extend(page["runs"])
        offset += 500
        if offset >= page["total"]:
            break
    out["list_all_ms"] = ms(time.perf_counter() - started)
    print(f"all {len(everything)} run summaries, in pages of 500: {out['list_all_ms']} ms")
    # the runs page as the browser gets it: GET /api/runs with its facets, through the Flask app
    from app import create_app, runner_of
    web = create_app({"RUNNER_AUTOSTART": False, "DATABASE_URL": url, "INSTANCE_PATH": folder})
    client = web.test_client()
    client.get("/api/runs?limit=1")                     # opens the store (first use)
    timings = []
    for query in ("facets=1", "facets=1&outcome=violations&era=2.6", "q=kip&facets=1", "offset=5000"):
        started = time.perf_counter()
        reply = client.get("/api/runs?" + query)
        timings.append(ms(time.perf_counter() - started))
        assert reply.status_code == 200 and reply.json["total"] > 0
    out["http_list_ms"] = max(timings)
    print(f"runs page over HTTP (GET /api/runs: 50 summaries + total + filter facets): "
          f"{', '.join(str(t) for t in timings)} ms")
    runner_of(web).stop()
    web.extensions["isrlab_runs"].close()
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out))
    engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())

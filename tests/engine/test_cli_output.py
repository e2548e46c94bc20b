"""``python -m engine run`` writes the result with the C JSON encoder, piece by piece, and the
text is exactly what ``json.dumps(result, separators=(",", ":"))`` gives."""
import contextlib
import io
import json

from engine.tools.cli import main, write_json


def test_write_json_is_json_dumps(run_library):
    result = run_library("acks1-loss-on-failover")
    doc = {**result, "odd_keys": {1: "a", 2.5: "b", True: "c", None: "d"}, "empty": [], "short": [1, 2]}
    for slice_len in (1, 7, 2000):
        out = io.StringIO()
        write_json(doc, out, slice_len)
        assert out.getvalue() == json.dumps(doc, separators=(",", ":"))
    for scalar in (None, 3, "x", [1, 2, 3]):
        out = io.StringIO()
        write_json(scalar, out, 2)
        assert out.getvalue() == json.dumps(scalar, separators=(",", ":"))


def test_run_prints_the_result_document(run_library):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", "acks1-loss-on-failover"]) == 0
    printed = json.loads(out.getvalue())
    expected = json.loads(json.dumps(run_library("acks1-loss-on-failover")))
    printed["stats"].pop("wall_ms")
    expected["stats"].pop("wall_ms", None)
    assert printed == expected


def test_bench_measures_the_same_run_under_pypy_and_prints_the_ratio():
    """From CPython with pypy3 installed (scripts/setup.sh), the bench runs the workload a second
    time in a PyPy process: the same run, so the same event, message and ack counts."""
    import re
    import subprocess
    import sys
    root = __file__.rsplit("/tests/", 1)[0]
    out = subprocess.run([sys.executable, "-m", "engine", "bench", "--duration-ms", "2000"], cwd=root,
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    heads = re.findall(r"bench-medium on (\w+) [\d.]+: 2 s simulated, (\d+) events, (\d+) messages, "
                       r"(\d+) records acked", out)
    assert [h[0] for h in heads] == ["cpython", "pypy"]
    assert heads[0][1:] == heads[1][1:] and int(heads[0][1]) > 1000
    assert re.search(r"PyPy / CPython \(wall time, bench-medium\) \d+\.\d\dx", out)
    # a JIT's steady state (the runs after the first) is printed under PyPy only
    steady = re.findall(r"steady state +[\d.]+ s +([\d.]+)x real time", out)
    assert len(steady) == 1 and out.index("steady state") > out.index("bench-medium on pypy")
    # what 20x real time needs: the run's events per simulated second x 20, under both
    aims = [int(a) for a in re.findall(r"20x real time needs +(\d+) events/s", out)]
    assert aims == [round(int(heads[0][1]) / 2 * 20)] * 2
    # PyPy's allocation: a whole number of 32 MB nurseries (engine.tools.worker's), shared out per event
    minors = re.findall(r"allocated per event +(\d+) bytes \(~(\d+) minor collections x 32 MB nursery\); "
                        r"collector \d+% of the CPU", out)
    assert len(minors) == 1 and int(minors[0][1]) >= 1
    assert int(minors[0][0]) == round(int(minors[0][1]) * (32 << 20) / int(heads[1][1]))
    # what survived the nursery: some of it (a run keeps its history and records), never more
    # than it allocated
    kept = re.findall(r"kept per event +(\d+) bytes \(survived the nursery", out)
    assert len(kept) == 1 and 0 < int(kept[0]) < int(minors[0][0])

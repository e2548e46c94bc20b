"""Test-wide settings. With ISRLAB_NO_SKIP=1 (set by ./test.sh, hence CI) a skipped test fails
the session: browser, Spark and PostgreSQL tests must run, not be skipped."""
import os
import tempfile

# A request waits JOB_ANSWER_WITHIN_S for its job before answering 202. On a loaded machine a quick
# save can take longer than the 0.8 s default, so tests wait for the result unless they are about
# the 202 path itself (tests/app/test_jobs.py sets the default back on its own apps).
os.environ.setdefault("ISRLAB_JOB_ANSWER_WITHIN_S", "30")

# An app a test builds without a store of its own must not open the developer's: by default the
# instance folder (SQLite runs, snapshot key) is <repo>/instance, where ./run.sh keeps real saved
# runs. Every app of the suite that names no INSTANCE_PATH gets this throwaway folder instead.
_INSTANCE = tempfile.TemporaryDirectory(prefix="isrlab-tests-instance-")
os.environ.setdefault("ISRLAB_INSTANCE_PATH", _INSTANCE.name)

_skipped = []


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("ISRLAB_NO_SKIP") == "1" and _skipped:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("ISRLAB_NO_SKIP") == "1" and _skipped:
        terminalreporter.write_line(
            f"FAILED: {len(_skipped)} test(s) skipped; every test must run here: " + ", ".join(_skipped[:10]),
            red=True)

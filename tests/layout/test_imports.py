"""Dependencies point one way: web -> replay / runner / store / sweeps / analytics -> engine, and
no module reaches back up. Read from the source, so a lazy import inside a function counts."""
from .imports import cycles, graph

EDGES = graph()


def _importers_of(prefix):
    return {m: [t for t in targets if t == prefix or t.startswith(prefix + ".")]
            for m, targets in EDGES.items()}


def _offenders(prefix, allowed):
    out = []
    for module, targets in _importers_of(prefix).items():
        if targets and not any(module == a or module.startswith(a + ".") for a in allowed):
            out += [f"{module} imports {t} (line {EDGES[module][t]})" for t in targets]
    return out


def test_the_graph_sees_every_package():
    assert {"engine.simulation", "app.web.runs", "app.replay.seek", "app.store.runs", "app.spark.session"} <= set(EDGES)
    assert "engine.simulation" in EDGES["app.replay.seek"]


def test_no_import_cycles():
    assert cycles(EDGES) == []


def test_one_error_type_every_user_error_is_a_scenario_error():
    from app.analytics.resim import QuestionError
    from app.errors import UserError
    from app.replay.links import LinkError
    from app.replay.service import ReplayError
    from app.runner.errors import AppError
    from app.spark.jdbc import JdbcError
    from app.store.errors import StoreError
    from app.sweeps.spec import SweepError
    from engine.scenario.document import ScenarioError
    for cls in (AppError, StoreError, LinkError, ReplayError, QuestionError, JdbcError, UserError, SweepError):
        assert issubclass(cls, ScenarioError), cls
        assert cls("f", "m", "a").to_dict() == {"field": "f", "message": "m", "allowed": "a"}


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_the_engine_imports_nothing_of_the_app():
    assert _offenders("app", allowed=("app",)) == []


def test_only_the_factory_and_the_command_line_import_the_web_layer():
    assert _offenders("app.web", allowed=("app.web", "app.factory", "app.cli", "app.server")) == []


def test_the_store_and_spark_plumbing_are_leaves():
    for leaf in ("app.store", "app.spark"):
        out = [f"{m} imports {t}" for m, targets in EDGES.items() if m.startswith(leaf + ".") or m == leaf
               for t in targets if t.startswith("app.") and not t.startswith(leaf) and t not in ("app.config", "app.errors")]
        assert out == [], leaf


def test_sweeps_do_not_reach_into_analytics_reports_or_search():
    bad = [f"{m} imports {t}" for m, targets in EDGES.items() if m.startswith("app.sweeps")
           for t in targets if t.split(".")[:2] in (["app", "analytics"], ["app", "reports"],
                                                    ["app", "counterexample"], ["app", "runner"])]
    assert bad == []


def test_the_runner_and_replay_never_import_the_pages():
    bad = [f"{m} imports {t}" for m, targets in EDGES.items() if m.startswith(("app.runner", "app.replay"))
           for t in targets if t.startswith(("app.web", "app.reports", "app.counterexample", "app.factory"))]
    assert bad == []

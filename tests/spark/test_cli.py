"""The command line of the Spark jobs: arguments to a question, invalid input refused before a
JVM starts (exit status 2, the field named), the progress bar. (No Spark.)"""
import io
import json
from types import SimpleNamespace

from app.analytics import cli
from app.commandline import Progress


def test_flags_make_a_question():
    ctx = cli.resimulate_command.make_context("resimulate", [
        "--era", "0.10", "--set", "min.insync.replicas=2", "--set", "unclean.leader.election.enable=true",
        "--property", "max_offline_ms", "--param", "5000", "--sweep", "a", "--no-saved"])
    args = SimpleNamespace(**cli.resim_args(ctx.params))
    assert cli.question_from_args(args) == {
        "property": {"name": "max_offline_ms", "param": 5000},
        "what_if": {"kafka_version": "0.10", "keep_config": True,
                    "set": {"min.insync.replicas": 2, "unclean.leader.election.enable": True}},
        "sweeps": ["a"], "saved": False}


def test_invalid_sweep_is_refused_before_spark_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_session", lambda master, **_: (_ for _ in ()).throw(AssertionError("no JVM")))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"grid": {"acks": ["2"]}}))
    assert cli.main(["sweep", str(path), "--db", f"sqlite:///{tmp_path}/s.db"]) == 2
    assert "grid.acks[0]" in capsys.readouterr().err
    path.write_text("{not json")
    try:
        cli.main(["sweep", str(path)])
    except SystemExit as exc:
        assert exc.code == 2
    assert cli.main(["resimulate", "--era", "9.9"]) == 2
    assert "what_if.kafka_version" in capsys.readouterr().err


def test_progress_bar_draws_counts_and_rate_on_a_terminal():
    out = io.StringIO()
    progress = Progress("bar", stream=out, force_bar=True)
    progress({"done": 0, "total": 1000, "rate_per_s": 0.0, "eta_s": None, "elapsed_s": 0})
    progress({"done": 250, "total": 1000, "rate_per_s": 4.2, "eta_s": 178.6, "elapsed_s": 60})
    progress({"stage": "shrinking"})
    text = out.getvalue()
    assert "250/1000" in text and "run" in text and "shrinking..." in text


def test_progress_is_quiet_off_a_terminal_and_json_when_asked():
    quiet = io.StringIO()                       # not a TTY: tqdm stays silent
    Progress("bar", stream=quiet)({"done": 5, "total": 10})
    assert quiet.getvalue() == ""
    machine = io.StringIO()
    Progress("json", stream=machine)({"done": 5, "total": 10, "rate_per_s": 1.23456})
    assert json.loads(machine.getvalue()) == {"progress": {"done": 5, "total": 10, "rate_per_s": 1.235}}


def test_every_subcommand_is_listed_by_help():
    from click.testing import CliRunner

    from app.cli import cli as isrlab
    result = CliRunner().invoke(isrlab, ["--help"])
    assert result.exit_code == 0
    for name in ("serve", "run", "sweep", "analyze", "resimulate", "search"):
        assert f"  {name} " in result.output
    assert "--budget-s" in CliRunner().invoke(isrlab, ["search", "--help"]).output

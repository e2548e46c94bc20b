"""The command line of the Spark jobs: arguments to a question, invalid input refused before a
JVM starts (exit status 2, the field named), the progress bar. (No Spark.)"""
import json

from app.analytics import cli


def test_flags_make_a_question():
    args = cli.build_parser().parse_args(["resimulate", "--era", "0.10", "--set", "min.insync.replicas=2",
                                          "--set", "unclean.leader.election.enable=true", "--property",
                                          "max_offline_ms", "--param", "5000", "--sweep", "a", "--no-saved"])
    assert cli.question_from_args(args) == {
        "property": {"name": "max_offline_ms", "param": 5000},
        "what_if": {"kafka_version": "0.10", "keep_config": True,
                    "set": {"min.insync.replicas": 2, "unclean.leader.election.enable": True}},
        "sweeps": ["a"], "saved": False}


def test_invalid_sweep_is_refused_before_spark_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_session", lambda master: (_ for _ in ()).throw(AssertionError("no JVM")))
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


def test_progress_bar():
    line = cli.render_bar({"done": 250, "total": 1000, "rate_per_s": 4.2, "eta_s": 178.6, "elapsed_s": 60}, width=20)
    assert line == "[#####...............] 250/1000 runs 4.2 runs/s, 00:02:58 left"
    assert "--:--" in cli.render_bar({"done": 0, "total": 10, "rate_per_s": 0.0, "eta_s": None, "elapsed_s": 0})

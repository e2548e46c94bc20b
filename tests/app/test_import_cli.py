"""isrlab import-cluster: the scenario on standard output (or --out), notes on standard error, a
refusal with the line number and exit status 2, nothing written then."""
import json

import click
from click.testing import CliRunner

from app.cli import cli
from engine.scenario.document import load
from tests.engine.import_samples import API_VERSIONS_4_1, DESCRIBE_4_1, QUORUM_4_1


def isrlab(args, stdin=None):
    """The command as ``isrlab`` runs it (app.cli.main: the command's return value is the exit
    status); standard error apart from standard output."""
    result = CliRunner().invoke(cli, args, input=stdin, standalone_mode=False)
    exc = result.exception
    result.err = result.stderr
    if isinstance(exc, click.ClickException):          # app.commandline.invoke shows it, exit status 2
        result.status, result.err = exc.exit_code, result.stderr + exc.format_message()
    elif exc is not None and not isinstance(exc, SystemExit):
        raise exc
    else:
        result.status = result.return_value if exc is None else exc.code
    return result


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_prints_the_scenario_and_the_notes_apart(tmp_path):
    describe = write(tmp_path, "describe.txt", DESCRIBE_4_1)
    brokers = write(tmp_path, "api.txt", API_VERSIONS_4_1)
    quorum = write(tmp_path, "quorum.txt", QUORUM_4_1)
    result = isrlab(["import-cluster", describe, "--brokers", brokers, "--quorum",
                                                      quorum, "--kafka-version", "4.1", "--name", "prod"])
    assert result.status == 0, result.err
    scenario = json.loads(result.stdout)
    assert scenario["name"] == "prod" and scenario["kafka_version"] == "4.1"
    assert scenario["brokers"] == [1, 2, 3, 4] and scenario["controllers"] == [3000, 3001, 3002]
    assert scenario["topics"][0]["assignment"] == {"0": [1, 2, 3], "1": [2, 3, 1]}
    assert '"0": [1, 2, 3]' in result.stdout                   # one replica list a line
    notes = result.err.splitlines()
    assert all(n.startswith("note: ") for n in notes)
    assert any("Eligible Leader Replicas" in n for n in notes)
    load(scenario)


def test_out_writes_the_file_and_standard_input_is_read(tmp_path):
    out = tmp_path / "scenario.json"
    result = isrlab(["import-cluster", "-", "--kafka-version", "2.6", "--out",
                                                      str(out), "--topic", "logs"], stdin=DESCRIBE_4_1)
    assert result.status == 0 and result.stdout == ""
    assert [t["name"] for t in json.loads(out.read_text())["topics"]] == ["logs"]


def test_a_malformed_line_exits_2_naming_it_and_writes_nothing(tmp_path):
    out = tmp_path / "scenario.json"
    describe = write(tmp_path, "describe.txt", DESCRIBE_4_1.replace("Leader: 2\t", "Leader: two\t"))
    result = isrlab(["import-cluster", describe, "--kafka-version", "4.1",
                                                      "--out", str(out)])
    assert result.status == 2
    assert "describe line 5: 'two' is not a whole number" in result.err
    assert not out.exists() and result.stdout == ""


def test_an_unknown_era_and_a_missing_file_are_refused(tmp_path):
    describe = write(tmp_path, "describe.txt", DESCRIBE_4_1)
    result = isrlab(["import-cluster", describe, "--kafka-version", "2.5"])
    assert result.status == 2 and "2.5" in result.err
    result = isrlab(["import-cluster", str(tmp_path / "none.txt"),
                                                      "--kafka-version", "2.6"])
    assert result.status == 2 and "cannot read" in result.err


def test_a_file_over_the_bound_is_refused_without_being_read_whole(tmp_path):
    big = write(tmp_path, "big.txt", "x" * 1_500_000)
    result = isrlab(["import-cluster", big, "--kafka-version", "2.6"])
    assert result.status == 2 and "at most 1,000,000 bytes" in result.err

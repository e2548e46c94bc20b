"""``isrlab import-cluster``: a scenario of a real cluster from the output of Kafka's own tools
(engine/scenario/import_cluster.py; docs/scenario-format.md §7).

    isrlab import-cluster DESCRIBE.txt [--brokers API_VERSIONS.txt] [--quorum QUORUM.txt]
                          --kafka-version 3.7 [--out scenario.json] [--topic NAME ...]

The scenario's JSON goes to standard output (or ``--out``), the notes - what the scenario could
not keep of the pasted cluster - to standard error. A text that cannot be read is refused with
its line number and exit status 2; nothing is written then. ``-`` reads standard input.
"""
import json
import re
import sys

import click

from app.i18n.command_line import error_text
from app.i18n.import_notes import localized_notes
from app.i18n.text import lazy as _, _ as tr
from engine import eras
from engine.scenario.import_cluster import import_cluster
from engine.scenario.import_text import MAX_TEXT_BYTES, ImportRefused


def _read(path, what):
    if path is None:
        return None
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(MAX_TEXT_BYTES + 1)    # a bigger file is refused, not read whole
    except OSError as exc:
        raise ImportRefused(what, f"cannot read {path}: {exc.strerror}", "a readable file, or - for standard input") from None
    if len(data) > MAX_TEXT_BYTES:
        raise ImportRefused(what, f"{path} is more than {MAX_TEXT_BYTES:,} bytes",
                            f"at most {MAX_TEXT_BYTES:,} bytes", too_large=True)
    return data


_ID_LIST = re.compile(r"\[\s+(-?\d+(?:,\s+-?\d+)*)\s+\]")


def scenario_json(scenario):
    """Indented JSON with each replica list on one line (``"0": [1, 2, 3]``)."""
    text = json.dumps(scenario, indent=2)
    return _ID_LIST.sub(lambda m: "[" + ", ".join(re.split(r",\s+", m.group(1))) + "]", text) + "\n"


@click.command("import-cluster", help=_("A scenario of the cluster that DESCRIBE.txt (the output of "
                                        "kafka-topics.sh --describe) shows, in the era --kafka-version; notes"
                                        " on what it could not keep go to standard error."))
@click.argument("describe", metavar="DESCRIBE.txt")
@click.option("--brokers", "api_versions", metavar="API_VERSIONS.txt",
              help=_("output of kafka-broker-api-versions.sh: broker ids and racks"))
@click.option("--quorum", metavar="QUORUM.txt",
              help=_("output of kafka-metadata-quorum.sh describe --status: the KRaft voters"))
@click.option("--kafka-version", required=True, type=click.Choice(eras.VERSIONS),
              help=_("the era whose rules the simulation follows"))
@click.option("--topic", "topics", multiple=True, metavar="NAME", help=_("import only this topic (repeatable)"))
@click.option("--name", help=_("the scenario's name (default: imported cluster)"))
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help=_("write the scenario here"))
def import_command(describe, api_versions, quorum, kafka_version, topics, name, out):
    try:
        scenario, notes = import_cluster(_read(describe, "describe"), kafka_version,
                                         api_versions=_read(api_versions, "api-versions"),
                                         quorum=_read(quorum, "quorum"), topics=list(topics), name=name)
    except ImportRefused as exc:
        click.echo(tr("error: cannot import: %(error)s", error=error_text(exc)), err=True)
        return 2
    text = scenario_json(scenario)
    if out:
        with open(out, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)
    for note in localized_notes(notes):
        click.echo(tr("note: %(note)s", note=note), err=True)
    return 0

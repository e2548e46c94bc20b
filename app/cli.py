"""``isrlab`` (also ``python -m app``): one command line for the whole application.

    isrlab serve [--host H] [--port P]        the live web simulator (the default command)
    isrlab rooms --message-queue URL          the room host of web processes sharing a Redis
    isrlab run SCENARIO [--save] ...          a scenario run headless, optionally saved
    isrlab sweep SWEEP.json ...               a sweep on Spark (resumable)
    isrlab analyze [--sweep ID ...] ...       the analysis of stored sweeps on Spark
    isrlab resimulate [--era 0.10] ...        stored runs re-simulated and asked a question
    isrlab search BASE.json ...               counterexample search, shrink, save
    isrlab import-cluster DESCRIBE.txt ...    a scenario from kafka-topics.sh --describe output

``isrlab --help`` and ``isrlab COMMAND --help`` list every option. ``python -m engine`` stays the
engine's own standard-library command line (run, list, search, bench).
"""
import sys

import click

from .analytics.cli import analyze_command, resimulate_command, sweep_command
from .commandline import invoke
from .i18n import command_line
from .i18n.text import lazy as _, use_lang
from .counterexample.cli import search_command
from .importcli import import_command
from .replay.headless import run_command


class DefaultGroup(click.Group):
    """``isrlab`` with no command, or with only options, serves: what ``./run.sh`` relies on.
    ``--lang zh-CN`` (anywhere) or the locale (``LANG=zh_CN.UTF-8``) chooses the language of its
    help and messages before anything is parsed (app/i18n/command_line.py)."""

    def parse_args(self, ctx, args):
        command_line.choose(args)
        command_line.translate_option_help(self)
        args = _without_lang(args)
        if not args or (args[0].startswith("-") and args[0] not in ("--help", "-h")):
            args = ["serve", *args]
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, **kwargs)
        finally:
            use_lang("en")          # the process's other words (outside a request) stay English

    def list_commands(self, ctx):
        return list(self.commands)                  # serve first, then in the order of a workflow


def _without_lang(args):
    """``args`` less ``--lang X`` / ``--lang=X`` (read already; any command may be given it)."""
    out, skip = [], False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            return out + list(args[i:])
        elif arg == "--lang":
            skip = True
        elif not arg.startswith("--lang="):
            out.append(arg)
    return out


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]},
             help=_("ISR Lab: a visual, deterministic simulator of Apache Kafka replication."))
@click.option("--lang", type=click.Choice(["en", "zh-CN"]), expose_value=False,
              help=_("the language of help and messages (default: the locale; LANG=zh_CN.UTF-8 is "
                     "Chinese)"))
def cli():
    """The group: its help is the lazy text above, read in the chosen language."""


@cli.command("serve", help=_("Serve the live web simulator, saved runs, replays and the analytics report "
                             "(through gunicorn: one web process, a thread per connection, live rooms in one "
                             "room worker process per core; settings from ISRLAB_* variables)."))
@click.option("--host", help=_("address to listen on (default ISRLAB_HOST or 127.0.0.1)"))
@click.option("--port", type=int, help=_("port (default ISRLAB_PORT or 5000)"))
def serve_command(host, port):
    from .config import load_settings, serving_defaults
    from .server import serve
    settings = serving_defaults(load_settings())
    if host:
        settings["HOST"] = host
        settings["ALLOWED_HOSTS"] = settings["ALLOWED_HOSTS"] + [host]
    if port is not None:
        settings["PORT"] = port
    return serve(settings)


@cli.command("rooms", help=_("Host the live rooms of every web process started with the same "
                             "ISRLAB_MESSAGE_QUEUE: room workers simulate them, frames reach viewers through "
                             "Redis (docs/deploy.md)."))
@click.option("--message-queue", "url", help=_("Redis URL shared with the web processes (default "
                                              "ISRLAB_MESSAGE_QUEUE)"))
@click.option("--workers", type=click.IntRange(1, 256), help=_("room worker processes (default "
                                                              "ISRLAB_ROOM_WORKERS, else one per core)"))
def rooms_command(url, workers):
    """The room host: app/rooms/host.py."""
    from .config import load_settings, serving_defaults
    from .rooms.host import serve
    settings = serving_defaults(load_settings())     # the rooms `isrlab serve` would hold alone
    url = url or settings["MESSAGE_QUEUE"]
    if not url or not url.startswith(("redis://", "rediss://", "unix://")):
        raise click.UsageError(str(_("--message-queue (or ISRLAB_MESSAGE_QUEUE) must be a Redis URL, "
                                     "e.g. redis://127.0.0.1:6379/0")))
    return serve(settings, url, workers)


for _command in (run_command, sweep_command, analyze_command, resimulate_command, search_command,
                 import_command):
    cli.add_command(_command)


def main(argv=None):
    """The ``isrlab`` console script (pyproject.toml) and ``python -m app``."""
    return invoke(cli, sys.argv[1:] if argv is None else argv, "isrlab")

"""What every ``isrlab`` subcommand shares: running a click command from a list of arguments
(tests and ``python -m app``), and progress that a person and a machine can both read.

Progress comes from tqdm (rate, ETA, a redraw that copes with narrow terminals) and is quiet when
standard error is not a terminal, unless asked for; ``--progress json`` prints one JSON object a
line on standard output instead, for scripts.
"""
import json
import sys

import click
from tqdm import tqdm

from .i18n.text import N_, lazy as _, _ as tr

PROGRESS_MODES = ("bar", "json", "none")
#: the stages a command reports (``{"stage": ...}``), shown in the reader's language on a terminal
#: (the JSON lines keep the English name: scripts read them)
STAGES = [N_("starting Spark"), N_("searching"), N_("shrinking"), N_("done"), N_("simulating"), N_("saving"),
          N_("sampling the run")]


def invoke(command, argv, prog_name):
    """Run a click command on ``argv``; return its exit status instead of exiting."""
    try:
        result = command.main(args=list(argv or []), prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return 0 if result is None else result


class Progress:
    """Called with ``{"done", "total", ...}`` updates (plus ``{"stage": ...}`` ones); draws a tqdm
    bar (``bar``), prints JSON lines (``json``) or stays silent (``none``)."""

    def __init__(self, mode="bar", unit="run", stream=None, force_bar=False):
        if mode not in PROGRESS_MODES:
            raise ValueError(f"progress mode {mode!r}: expected one of {', '.join(PROGRESS_MODES)}")
        self.mode, self.unit, self.force_bar = mode, unit, force_bar
        self.stream = stream
        self._bar = None

    def __call__(self, update):
        if self.mode == "json":
            out = self.stream or sys.stdout
            out.write(json.dumps({"progress": {k: (round(v, 3) if isinstance(v, float) else v)
                                               for k, v in update.items()}}) + "\n")
            out.flush()
        elif self.mode == "bar":
            self._draw(update)

    def _draw(self, update):
        if "stage" in update and "done" not in update:
            self.close()
            tqdm.write(tr("%(stage)s...", stage=tr(update["stage"])), file=self.stream or sys.stderr)
            return
        if "done" not in update:
            return
        if self._bar is None or self._bar.total != update["total"]:
            self.close()
            # disable=None: quiet when the stream is not a terminal (CI logs, pipes)
            self._bar = tqdm(total=update["total"], unit=self.unit, file=self.stream or sys.stderr,
                             disable=False if self.force_bar else None, dynamic_ncols=True, leave=True)
        self._bar.update(max(0, update["done"] - self._bar.n))
        if update["done"] >= update["total"]:
            self.close()

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def progress_option(default="bar"):
    return click.option("--progress", type=click.Choice(PROGRESS_MODES), default=default, show_default=True,
                        help=_("bar: a progress bar on a terminal (quiet otherwise); json: one JSON line per "
                               "update on standard output; none"))

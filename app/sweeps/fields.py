"""The sweep document's error and its two small readers, shared by spec.py and profiles.py."""
import json

from engine.scenario.document import ScenarioError


class SweepError(ScenarioError):
    """A sweep document's bad field: the scenario errors' shape (field, message, allowed)."""


def _short(value):
    return json.dumps(value)[:60]


def _int(value, field, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SweepError(field, f"{_short(value)} is not an integer from {lo} to {hi}",
                         f"an integer from {lo} to {hi}")
    return value

"""A sweep's fault profiles and fault phase: validated and spelled out in full (spec.py's
docstring describes the document). Kinds and defaults come from ``engine.tools.faults``."""
import re

from engine.tools.faults import DEFAULT_PROFILE, KINDS, KRAFT_ONLY_KINDS, RACK_ONLY_KINDS, normalise_profile

from .fields import SweepError, _int, _short

PROFILE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
FAULTS_AXIS = "faults"
DEFAULT_START_MS = 1000
DEFAULT_END_FRACTION = 0.6
BUILTIN_PROFILES = {"default": dict(DEFAULT_PROFILE),
                    "none": {k: (0.0, lo, hi) for k, (_r, lo, hi) in DEFAULT_PROFILE.items()}}


def _profile(value, field, kraft=True, racks=True):
    if not isinstance(value, dict):
        raise SweepError(field, f"{_short(value)} is not a fault profile",
                         '{"from": "default"|"none", kind: [rate per minute, min ms, max ms]}')
    start = value.get("from", "default")
    if start not in ("default", "none"):
        raise SweepError(f"{field}.from", f"{_short(start)} is not a starting profile", '"default" or "none"')
    out = {}
    for kind, spec in value.items():
        if kind == "from":
            continue
        if kind not in KINDS:
            raise SweepError(f"{field}.{kind}", "unknown fault kind", ", ".join(KINDS))
        if kind in KRAFT_ONLY_KINDS and not kraft:
            raise SweepError(f"{field}.{kind}", "acts on KRaft controller voters and no era of this "
                                                "sweep is a KRaft era", '"3.9-kraft" or "4.1" in the grid')
        if kind in RACK_ONLY_KINDS and not racks:
            raise SweepError(f"{field}.{kind}", "fails a whole rack and no scenario of this sweep has "
                                                "racks", 'racks in the base, or a "racks" grid axis')
        if isinstance(spec, dict):
            if set(spec) - {"rate_per_min", "min_ms", "max_ms"}:
                raise SweepError(f"{field}.{kind}", "unknown field", "rate_per_min, min_ms, max_ms")
            default = BUILTIN_PROFILES[start][kind]
            spec = [spec.get("rate_per_min", default[0]), spec.get("min_ms", default[1]),
                    spec.get("max_ms", default[2])]
        if not isinstance(spec, list) or len(spec) != 3:
            raise SweepError(f"{field}.{kind}", f"{_short(spec)} is not [rate, min ms, max ms]",
                             "[rate per simulated minute, min duration ms, max duration ms]")
        rate, lo, hi = spec
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1000:
            raise SweepError(f"{field}.{kind}", f"rate {_short(rate)} is out of range", "a number from 0 to 1000")
        _int(lo, f"{field}.{kind}", 0, 10 ** 8)
        _int(hi, f"{field}.{kind}", lo, 10 ** 8)
        out[kind] = (float(rate), lo, hi)
    try:
        full = normalise_profile({**BUILTIN_PROFILES[start], **out})
    except ValueError as exc:
        raise SweepError(field, str(exc), None) from None
    return {k: list(full[k]) for k in kinds_of(kraft, racks)}


def kinds_of(kraft, racks=False):
    """The kinds a sweep spells out: a sweep without a KRaft era leaves the controller kind out,
    one without racks the zone kind (they are never drawn there), so a document keeps the id it
    had before KRaft and racks existed."""
    left_out = (() if kraft else KRAFT_ONLY_KINDS) + (() if racks else RACK_ONLY_KINDS)
    return tuple(k for k in KINDS if k not in left_out)


def _profiles(doc, grid, kraft=True, racks=False):
    defined = doc.get("fault_profiles", {})
    if not isinstance(defined, dict):
        raise SweepError("fault_profiles", f"{_short(defined)} is not an object", "name -> fault profile")
    profiles = {name: {k: list(prof[k]) for k in kinds_of(kraft, racks)}
                for name, prof in BUILTIN_PROFILES.items()}
    for name, value in defined.items():
        if not PROFILE_NAME.match(name) or name in BUILTIN_PROFILES:
            raise SweepError(f"fault_profiles.{name}", "is not a usable profile name",
                             "1-40 characters A-Z a-z 0-9 _ . -, not default or none")
        profiles[name] = _profile(value, f"fault_profiles.{name}", kraft, racks)
    axis = dict(grid).get(FAULTS_AXIS)
    given = doc.get("faults")
    if axis is not None and given is not None:
        raise SweepError("faults", "the profile is given both here and as a grid axis", "one of the two")
    if isinstance(given, dict):
        profiles["sweep"] = _profile(given, "faults", kraft, racks)
        given = "sweep"
    default_name = "default" if given is None else given
    used = list(axis) if axis is not None else [default_name]
    for i, name in enumerate(used):
        if name not in profiles:
            field = f"grid.faults[{i}]" if axis is not None else "faults"
            raise SweepError(field, f"{_short(name)} is not a fault profile",
                             ", ".join(sorted(profiles)))
    return {name: profiles[name] for name in used}, default_name if axis is None else None


def _phase(value):
    if not isinstance(value, dict) or set(value) - {"start_ms", "end_ms", "end_fraction"}:
        raise SweepError("fault_phase", f"{_short(value)} is not a fault phase",
                         '{"start_ms": integer, "end_ms": integer} or {"end_fraction": number}')
    start = _int(value.get("start_ms", DEFAULT_START_MS), "fault_phase.start_ms", 0, 10 ** 9)
    end = value.get("end_ms")
    if end is not None:
        end = _int(end, "fault_phase.end_ms", start + 1, 10 ** 9)
    fraction = value.get("end_fraction", DEFAULT_END_FRACTION)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise SweepError("fault_phase.end_fraction", f"{_short(fraction)} is out of range",
                         "a number between 0 and 1 (exclusive)")
    return {"start_ms": start, "end_ms": end, "end_fraction": float(fraction)}

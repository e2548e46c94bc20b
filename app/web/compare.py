"""Compare (``/compare``, ``POST /api/compare``): two runs on one time axis and the first moment
they diverge. Each side is ``{"run": id}``, ``{"library": name}``, ``{"scenario": {...}}`` or
``{"variant": {...}}`` (the first side under another era, config, acks or seed)."""
import json
import time

from flask import current_app, jsonify, render_template

from ..replay.compare import compare as compare_runs
from ..runner import AppError
from ..runner.limits import retarget
from .blueprint import bp
from .common import RID, checked_scenario, ext, json_body, replay_key


@bp.get("/compare")
def compare_page():
    return render_template("compare.html")


def _side(spec, field, base=None):
    service = ext().service
    if not isinstance(spec, dict) or len(spec) != 1:
        raise AppError(field, "is not one run",
                       '{"run": id}, {"library": name}, {"scenario": {...}} or {"variant": {...}}')
    (kind, value), = spec.items()
    if kind == "run":
        if isinstance(value, str) and RID.match(value):
            value = replay_key(value)
        if not (isinstance(value, int) and not isinstance(value, bool)) and not isinstance(value, str):
            raise AppError(f"{field}.run", "is not a run id", "the id of a saved run")
        run = service.run(value)
        return value, run
    if kind == "library":
        lib = current_app.extensions["isrlab"]["runner"].library
        if not isinstance(value, str) or value not in lib:
            raise AppError(f"{field}.library", f"{str(value)[:60]!r} is not a library scenario", ", ".join(lib))
        kind, value = "scenario", lib[value]
    if kind == "scenario":
        scenario = checked_scenario(value, "link")
        key = service.register_scenario(scenario)
        return key, service.run(key)
    if kind == "variant":
        if base is None:
            raise AppError(f"{field}.variant", "needs a first run to vary", '"a" as a run or a scenario')
        if not isinstance(value, dict) or not set(value) <= {"kafka_version", "config", "acks", "seed"}:
            raise AppError(f"{field}.variant", "is not a variant", "kafka_version, config, acks, seed")
        doc = json.loads(json.dumps(base["scenario"]))
        if "kafka_version" in value:
            doc, _dropped = retarget(doc, value["kafka_version"])
        if "config" in value:
            if not isinstance(value["config"], dict):
                raise AppError(f"{field}.variant.config", "is not an object", "config key -> value")
            doc["config"] = {**doc.get("config", {}), **value["config"]}
        if "acks" in value:
            for client in doc.get("clients", []):
                if client.get("type") == "producer":
                    client["acks"] = value["acks"]
        if "seed" in value:
            doc["seed"] = value["seed"]
        doc["duration_ms"] = min(doc["duration_ms"], base["end_ms"]) if base.get("saved") else doc["duration_ms"]
        doc["timeline"] = [op for op in doc["timeline"] if op["at_ms"] <= doc["duration_ms"]]
        scenario = checked_scenario(doc, "link")
        key = service.register_scenario(scenario)
        return key, service.run(key)
    raise AppError(field, f"{kind[:20]!r} is not a kind of run", "run, library, scenario or variant")


@bp.post("/api/compare")
def api_compare():
    body = json_body(("a", "b"), ("a", "b"))
    key_a, run_a = _side(body["a"], "a")
    key_b, run_b = _side(body["b"], "b", base=run_a)
    service = ext().service
    started = time.perf_counter()
    result = compare_runs(service.seeker(key_a), service.seeker(key_b))
    result["wall_ms"] = round((time.perf_counter() - started) * 1000)

    def describe(key, run):
        sc = run["scenario"]
        return {"rid": key if isinstance(key, str) else str(key), "title": run.get("title") or sc["name"],
                "kafka_version": sc["kafka_version"], "end_ms": run["end_ms"], "seed": sc["seed"],
                "config": sc.get("config", {}),
                "acks": sorted({str(c.get("acks")) for c in sc.get("clients", []) if c.get("type") == "producer"})}

    return jsonify(ok=True, a=describe(key_a, run_a), b=describe(key_b, run_b), **result)

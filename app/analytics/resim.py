"""Re-ask a question of every stored run: re-simulate stored runs on executors.

The corpus: sweep runs (``sweep_runs``, optionally only some sweeps) and saved runs of any source
(the store's ``runs``: live sessions, headless runs, imports, forks, links...). Each stored run is
its scenario, so it is replayed exactly on any executor; a question may change it first (a
what-if, e.g. the same run under "0.10" truncation) and then checks a property over the whole
result — something the stored events cannot answer. Results go to ``resim_results`` (one row per
run), ``resim_groups`` (per sweep cell, and per source and era, with Wilson intervals) and
``resim_questions``; each question's rows are replaced whole, so asking twice gives the same
tables.
"""
import functools
import hashlib
import json

from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from sqlalchemy import func, select

from app.errors import UserError
from app.spark.jdbc import jdbc_of, read_table
from app.store.db import reading
from app.store.models import Run
from app.sweeps import spec
from app.sweeps.schemas import B, I, L, S
from app.sweeps.tables import resim_groups, resim_questions, resim_results, sweep_runs
from engine import eras
from engine.scenario.document import ScenarioError
from engine.tools.search import PROPERTIES, validate_property
from engine.simulation import ENGINE_VERSION

from . import load, resim_worker
from .transforms import wilson

RESULT_SCHEMA = StructType([
    StructField("source", S, False), StructField("ref", S, False), StructField("sweep_id", S, True),
    StructField("cell_id", I, True), StructField("kafka_version", S, False), StructField("status", S, False),
    StructField("broken", B, False), StructField("broken_before", B, False), StructField("lost", I, False),
    StructField("violations", I, False), StructField("digest_match", B, True), StructField("detail", S, True)])
SWEEP_READ = StructType([StructField("run_key", S, False), StructField("sweep_id", S, False),
                         StructField("run_no", L, False),
                         StructField("cell_id", I, False), StructField("kafka_version", S, False),
                         StructField("scenario_json", S, False), StructField("history_sha256", S, True)])
SAVED_READ = StructType([StructField("id", L, False), StructField("source", S, False),
                         StructField("kafka_version", S, False), StructField("scenario_json", S, False)])
ALL_PROPERTIES = tuple(PROPERTIES) + resim_worker.LOCAL_PROPERTIES


class QuestionError(UserError):
    """A re-simulation question that is malformed."""


def validate_question(doc):
    """``{"property": {"name", "param"}, "what_if": {...}, "sweeps": [ids] | null, "saved": bool,
    "label"}`` normalised, with its id ("q-" + hash)."""
    if not isinstance(doc, dict):
        raise QuestionError("question", "is not an object", "a question document")
    unknown = set(doc) - {"property", "what_if", "sweeps", "saved", "label"}
    if unknown:
        raise QuestionError(sorted(unknown)[0], "unknown field", "property, what_if, sweeps, saved, label")
    prop = doc.get("property", {"name": "no_acked_loss"})
    if not isinstance(prop, dict):
        raise QuestionError("property", "is not an object", '{"name": ..., "param": ...}')
    name = prop.get("name", "no_acked_loss")
    if name in resim_worker.LOCAL_PROPERTIES:
        param = prop.get("param", 0 if name == "max_unclean_elections" else None)
        if name == "max_unclean_elections" and (isinstance(param, bool) or not isinstance(param, int) or param < 0):
            raise QuestionError("property.param", f"{param!r} is not a count", "an integer >= 0")
        prop = {"name": name, "param": param}
    else:
        try:
            prop = validate_property({"name": name, "param": prop.get("param")})
        except ScenarioError as exc:
            raise QuestionError(exc.field, exc.message, exc.allowed if name in PROPERTIES else
                                ", ".join(ALL_PROPERTIES)) from None
    change = doc.get("what_if")
    if change is not None:
        if not isinstance(change, dict) or set(change) - {"kafka_version", "keep_config", "set"}:
            raise QuestionError("what_if", "is not a what-if", '{"kafka_version", "keep_config", "set"}')
        version = change.get("kafka_version")
        if version is not None and version not in eras.VERSIONS:
            raise QuestionError("what_if.kafka_version", f"{version!r} is not an era", ", ".join(eras.VERSIONS))
        keep = change.get("keep_config", True)
        if not isinstance(keep, bool):
            raise QuestionError("what_if.keep_config", f"{keep!r} is not a boolean", "true or false")
        settings = change.get("set") or {}
        if not isinstance(settings, dict):
            raise QuestionError("what_if.set", "is not an object", "config key -> value")
        target = version or eras.VERSIONS[-1]
        for key, value in settings.items():
            if key not in eras.CONFIG:
                raise QuestionError(f"what_if.set.{key}", "unknown config key", ", ".join(eras.CONFIG))
            try:
                settings[key] = spec.eras_value(target, key, value, f"what_if.set.{key}")
            except ScenarioError as exc:
                raise QuestionError(exc.field, exc.message, exc.allowed) from None
        change = {"kafka_version": version, "keep_config": keep, "set": settings}
        if not version and not settings:
            change = None
    sweeps = doc.get("sweeps")
    if sweeps is not None:
        if not isinstance(sweeps, list) or not all(isinstance(s, str) and spec.SWEEP_ID.match(s) for s in sweeps):
            raise QuestionError("sweeps", "is not a list of sweep ids", "sweep ids, or null for every sweep")
    saved = doc.get("saved", True)
    if not isinstance(saved, bool):
        raise QuestionError("saved", f"{saved!r} is not a boolean", "true or false")
    out = {"property": prop, "what_if": change, "sweeps": sorted(sweeps) if sweeps is not None else None,
           "saved": saved}
    out["label"] = doc.get("label") or describe(out)
    if not isinstance(out["label"], str) or len(out["label"]) > 500:
        raise QuestionError("label", "is not a text of at most 500 characters", "text")
    key = json.dumps({k: out[k] for k in ("property", "what_if", "sweeps", "saved")}, sort_keys=True)
    out["id"] = "q-" + hashlib.sha256(key.encode()).hexdigest()[:12]
    return out


def describe(question):
    prop = question["property"]
    text = PROPERTIES.get(prop["name"]) or {"converges": "the cluster converges by the end",
                                            "max_unclean_elections": "at most param unclean elections"}[prop["name"]]
    if prop.get("param") is not None:
        param = str(prop["param"])
        text = text.replace("param", param) if "param" in text else f"{text} ({param})"
    change = question["what_if"]
    if change:
        parts = []
        if change["kafka_version"]:
            parts.append(f'under "{change["kafka_version"]}" rules' +
                         (" keeping each run's config" if change["keep_config"] else ""))
        parts += [f"{k}={json.dumps(v)}" for k, v in change["set"].items()]
        text = f"{text}, if replayed {' and '.join(parts)}"
    return text


def stored_runs(spark, store, jdbc, question, parallelism):
    """Every stored run the question covers: (source, ref, sweep_id, cell_id, kafka_version,
    scenario_json, history_sha256)."""
    parts = []
    with reading(store) as conn:
        where_sweeps = [sweep_runs.c.status == "ok"]
        if question["sweeps"] is not None:
            where_sweeps.append(sweep_runs.c.sweep_id.in_(question["sweeps"] or [""]))
        lo, hi, n = conn.execute(select(func.min(sweep_runs.c.run_no), func.max(sweep_runs.c.run_no), func.count())
                                 .where(*where_sweeps)).one()
        run_lo, run_hi, n_saved = conn.execute(select(func.min(Run.id), func.max(Run.id), func.count())).one()
    if n:
        where = "status = 'ok'"
        if question["sweeps"] is not None:
            where += " AND sweep_id IN (" + ", ".join(f"'{s}'" for s in question["sweeps"]) + ")"
        df = read_table(spark, jdbc, "sweep_runs", SWEEP_READ, "run_no", (lo, hi), parallelism, where)
        parts.append(df.select(F.lit("sweep").alias("source"), F.col("run_key").alias("ref"), "sweep_id", "cell_id",
                               "kafka_version", "scenario_json", "history_sha256"))
    if question["saved"] and n_saved:
        df = read_table(spark, jdbc, "runs", SAVED_READ, "id", (run_lo, run_hi), parallelism)
        parts.append(df.select("source", F.col("id").cast("string").alias("ref"), F.lit(None).cast("string").alias("sweep_id"),
                               F.lit(None).cast("int").alias("cell_id"), "kafka_version", "scenario_json",
                               F.lit(None).cast("string").alias("history_sha256")))
    if not parts:
        return None, 0
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out, n + (n_saved if question["saved"] else 0)


def group_summary(results):
    """Pure: per sweep cell and per (source, era): runs, broken, broken before, Wilson interval."""
    ok = results.where(F.col("status") == "ok")
    key = F.when(F.col("source") == "sweep", F.concat_ws(":", F.lit("sweep"), "sweep_id", F.col("cell_id").cast("string"))) \
        .otherwise(F.concat_ws(":", "source", "kafka_version"))
    grouped = ok.groupBy(key.alias("group_key")).agg(
        F.count("*").cast("int").alias("runs"),
        F.sum(F.col("broken").cast("int")).cast("int").alias("broken"),
        F.sum(F.col("broken_before").cast("int")).cast("int").alias("broken_before"))
    lo, hi = wilson(F.col("broken"), F.col("runs"))
    return (grouped.withColumn("p_broken", F.col("broken").cast("double") / F.col("runs"))
            .withColumn("p_broken_lo", lo).withColumn("p_broken_hi", hi))


def ask(spark, store, question_doc, db_url=None, tasks_per_core=8):
    """Re-simulate the corpus for one question and replace its results. Returns the summary."""
    question = validate_question(question_doc)
    jdbc = jdbc_of(db_url or store.url.render_as_string(hide_password=False))
    parallelism = spark.sparkContext.defaultParallelism
    corpus, n = stored_runs(spark, store, jdbc, question, parallelism)
    qid = question["id"]
    rows, groups = [], []
    if corpus is not None:
        task = functools.partial(resim_worker.resimulate_many, question=question)
        n_tasks = max(1, min(n, parallelism * tasks_per_core))
        out = corpus.rdd.map(tuple).repartition(n_tasks).mapPartitions(task)
        results = spark.createDataFrame(out, RESULT_SCHEMA, verifySchema=False).cache()
        rows = [{"question_id": qid, **r.asDict()} for r in results.collect()]
        groups = [{"question_id": qid, **r.asDict()} for r in group_summary(results).collect()]
        results.unpersist()
    ok = [r for r in rows if r["status"] == "ok"]
    digests = [r["digest_match"] for r in ok if r["digest_match"] is not None]
    summary = {"id": qid, "label": question["label"][:500], "question_json": json.dumps(question, sort_keys=True),
               "engine_version": ENGINE_VERSION, "runs": len(ok), "broken": sum(r["broken"] for r in ok),
               "broken_before": sum(r["broken_before"] for r in ok),
               "exact": sum(digests) if digests else None, "errors": len(rows) - len(ok)}
    load.replace_rows(store, resim_results, resim_results.c.question_id == qid, rows)
    load.replace_rows(store, resim_groups, resim_groups.c.question_id == qid, groups)
    load.replace_rows(store, resim_questions, resim_questions.c.id == qid, [summary])
    summary["verified_digests"] = len(digests)
    summary["groups"] = groups
    return summary


def replay_histories(spark, items):
    """Re-simulate stored runs on executors and return their full histories: ``items`` is a list
    of (ref, scenario_json, end_ms or None). Returns {ref: history}."""
    sc = spark.sparkContext
    rdd = sc.parallelize(items, max(1, min(len(items), sc.defaultParallelism)))
    replay = resim_worker.replay_history
    return dict(rdd.map(lambda item: (item[0], replay(item[1], item[2]))).collect())



"""The search itself: evaluate seeds in batches until one breaks the property.

On Spark every batch is one job over the executors (the engine ships to them as it is, and
``engine.tools.search.evaluate_seed`` needs nothing else); without Spark the same batches run in this
process. The answer is always the *lowest* failing seed among those tried, so a search is
deterministic whatever the parallelism. It stops at the first batch with a failure, when the run
budget is spent, or when the time budget is (then it says how many runs it completed).
"""
import json
import time

from engine.tools.faults import normalise_profile
from engine.scenario.document import load
from engine.tools.search import evaluate_seed, validate_property


def batch_size(spark):
    """Seeds in the first batch; later batches double (up to 16x), so an early find wastes
    little while a long search pays Spark's per-job overhead rarely."""
    if spark is None:
        return 8
    return max(8, 4 * spark.sparkContext.defaultParallelism)


def find(base, prop, profile=None, runs=200, budget_s=None, spark=None, first_seed=0,
         progress=None, clock=time.monotonic):
    """Returns {"found", "runs", "seed", "evidence", "elapsed_s", "stopped_by"}."""
    base = load(base)
    prop = validate_property(prop)
    profile = normalise_profile(profile)
    base_json = json.dumps(base, sort_keys=True)
    started = clock()
    done = 0
    size = first_size = batch_size(spark)
    while done < runs:
        if budget_s is not None and clock() - started >= budget_s:
            return _outcome(False, done, None, None, clock() - started, "time budget")
        if budget_s is not None and done:
            # a batch must fit what is left of the time budget: size it by the measured time per run
            per_run_s = (clock() - started) / done
            size = max(1, min(size, int((budget_s - (clock() - started)) / max(per_run_s, 1e-6))))
        seeds = list(range(first_seed + done, first_seed + min(runs, done + size)))
        payloads = [(base_json, prop, profile, seed) for seed in seeds]
        if spark is not None:
            rdd = spark.sparkContext.parallelize(payloads, min(len(payloads),
                                                               spark.sparkContext.defaultParallelism * 2))
            results = rdd.map(evaluate_seed).collect()
        else:
            results = [evaluate_seed(p) for p in payloads]
        done += len(seeds)
        size = min(size * 2, first_size * 16)
        if progress:
            progress({"done": done, "total": runs, "elapsed_s": clock() - started})
        failing = sorted((seed, evidence) for seed, broken, evidence in results if broken)
        if failing:
            seed, evidence = failing[0]
            return _outcome(True, done, seed, evidence, clock() - started, "found")
    return _outcome(False, done, None, None, clock() - started, "run budget")


def _outcome(found, runs, seed, evidence, elapsed, stopped_by):
    return {"found": found, "runs": runs, "seed": seed, "evidence": evidence,
            "elapsed_s": round(elapsed, 3), "stopped_by": stopped_by}

"""Kafka's client metrics (``org.apache.kafka.common.metrics``, docs/model.md §22.5): the sampled
statistics behind the producer's ``record-error-rate`` and ``request-latency-avg``.

A ``SampledStat`` keeps ``metrics.num.samples`` samples (default 2) of
``metrics.sample.window.ms`` (default 30000) each; both defaults are the same from 0.10.2 to
4.1.0 (ProducerConfig). Recording rolls to the next sample once the current one is a window old
(``Sample.isComplete``); reading first resets every sample older than all the windows together
(``purgeObsoleteSamples``). ``Avg`` is the recorded total over the events of the kept samples
(0 with no event up to 2.1, NaN from 2.2 by KAFKA-7528: shown as no value); ``Rate`` is their total over the
elapsed window, counted as at least ``samples - 1`` whole windows plus the running part
(``Rate.windowSize``), in units per second.

A stat is plain data (``[current index, [[window start ms, events, value], ...]]``) so that the
engine can keep one inside a producer and a snapshot still pickles only builtins. Reading works
on a copy: the value at ``now`` is what one read at ``now`` returns, whoever read before.
"""
import math

WINDOW_MS = 30000
SAMPLES = 2


def new_stat():
    return [0, []]


def record(stat, value, now_ms, window_ms=WINDOW_MS, samples=SAMPLES):
    """SampledStat.record: into the current sample, rolled first when it is complete."""
    kept = stat[1]
    if not kept:
        kept.append([now_ms, 0, 0.0])
    sample = kept[stat[0]]
    if now_ms - sample[0] >= window_ms:
        stat[0] = (stat[0] + 1) % samples
        if stat[0] >= len(kept):
            sample = [now_ms, 0, 0.0]
            kept.append(sample)
        else:
            sample = kept[stat[0]]
            sample[0], sample[1], sample[2] = now_ms, 0, 0.0
    sample[2] += value
    sample[1] += 1


def _purged(stat, now_ms, window_ms, samples):
    """A copy of the samples after purgeObsoleteSamples at ``now_ms`` (an empty stat gets the
    sample ``oldest(now)`` would create)."""
    expire = samples * window_ms
    out = [[now_ms, 0, 0.0] if now_ms - s[0] >= expire else list(s) for s in stat[1]]
    return out or [[now_ms, 0, 0.0]]


def avg(stat, now_ms, nan_when_empty=True, window_ms=WINDOW_MS, samples=SAMPLES):
    """Avg.combine after a purge: None (Kafka's NaN) or 0.0 when no event is kept."""
    kept = _purged(stat, now_ms, window_ms, samples)
    count = sum(s[1] for s in kept)
    if not count:
        return None if nan_when_empty else 0.0
    return sum(s[2] for s in kept) / count


def rate(stat, now_ms, window_ms=WINDOW_MS, samples=SAMPLES):
    """Rate.measure in units per second: the kept total over Rate.windowSize."""
    kept = _purged(stat, now_ms, window_ms, samples)
    total = sum(s[2] for s in kept)
    elapsed = now_ms - min(s[0] for s in kept)
    full = elapsed // window_ms
    if full < samples - 1:
        elapsed += (samples - 1 - full) * window_ms
    return total / (elapsed / 1000.0) if elapsed > 0 else 0.0


def finite(value):
    """A JSON-safe number: None for NaN or infinity."""
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return value

"""A replica's local log: records, log end offset, high watermark, flush point, epoch cache.

Offsets are 0-based; ``leo`` is the offset of the *next* record (reference conventions). Each
record is a tuple ``(leader_epoch, record_id)``. The leader-epoch cache (KIP-101, §1.3) is a list
of ``[epoch, start_offset]`` pairs in increasing order.
"""

UNDEFINED = -1
_NO_EPOCH = object()  # no record seen yet (append_replicated)


class ReplicaLog:
    __slots__ = ("records", "log_start_offset", "hw", "flushed_offset", "epoch_cache",
                 "unflushed_since", "dirty_marks", "leo", "runs")

    def __init__(self):
        self.records = []          # (epoch, record_id) per offset, from log_start_offset
        self.log_start_offset = 0
        self.leo = 0               # log_start_offset + len(records), kept in step (hot path)
        self.runs = []             # [[start, end, epoch]]: the log as runs of one leader epoch (for views)
        self.hw = 0
        self.flushed_offset = 0    # offsets below this survive a power failure
        self.epoch_cache = []      # [[epoch, start_offset], ...]
        self.unflushed_since = 0   # append count since last flush (log.flush.interval.messages)
        self.dirty_marks = []      # [(time_ms, leo)] taken by the OS writeback task

    def latest_epoch(self):
        return self.epoch_cache[-1][0] if self.epoch_cache else UNDEFINED

    def record_at(self, offset):
        i = offset - self.log_start_offset
        if 0 <= i < len(self.records):
            return self.records[i]
        return None

    def read(self, offset, max_records):
        start = offset - self.log_start_offset
        return self.records[start:start + max_records]

    def append(self, epoch, record_ids, track_epochs):
        """Append as leader; returns the first offset. Stamps ``epoch`` (§6 step 4)."""
        first = self.leo
        count = len(record_ids)
        if track_epochs:
            cache = self.epoch_cache
            # assign_epoch returns at once while the epoch goes on (all but a term's first append)
            if not cache or cache[-1][0] != epoch or first < cache[-1][1]:
                self.assign_epoch(epoch, first)
        self.records.extend([(epoch, rid) for rid in record_ids])
        runs = self.runs   # _extend_runs, inlined: once per append
        if runs and runs[-1][2] == epoch and runs[-1][1] == first:
            runs[-1][1] = first + count
        else:
            runs.append([first, first + count, epoch])
        self.leo = first + count
        self.unflushed_since += count
        return first

    def append_replicated(self, records, track_epochs):
        """Append as follower: offsets and epochs as the leader wrote them (§7)."""
        offset = self.leo
        if len(records) == 1:
            # A follower's usual step: one record. The loop below, unrolled for that case.
            record = records[0]
            epoch = record[0]
            if track_epochs:
                cache = self.epoch_cache
                if not cache or cache[-1][0] != epoch:
                    self.assign_epoch(epoch, offset)
            runs = self.runs
            run = runs[-1] if runs else None
            if run is not None and run[2] == epoch and run[1] == offset:
                run[1] = offset + 1
            else:
                runs.append([offset, offset + 1, epoch])
            self.records.append(record)
            self.leo = offset + 1
            self.unflushed_since += 1
            return
        cache = self.epoch_cache
        last = cache[-1][0] if cache else None
        runs = self.runs
        run = runs[-1] if runs else None
        # One pass for the epoch cache and the runs (_extend_runs, inlined: the hot path), with
        # work only where the epoch changes: a run's end is written when it ends.
        previous = _NO_EPOCH  # the epoch of the previous record of this batch
        for epoch, _rid in records:
            if epoch != previous:
                if track_epochs and epoch != last:
                    self.assign_epoch(epoch, offset)
                    last = epoch
                if previous is not _NO_EPOCH:
                    run[1] = offset
                if run is None or run[2] != epoch or run[1] != offset:
                    run = [offset, offset, epoch]
                    runs.append(run)
                previous = epoch
            offset += 1
        if run is not None and previous is not _NO_EPOCH:
            run[1] = offset
        self.records.extend(records)
        self.leo = offset
        self.unflushed_since += len(records)

    def truncate_to(self, offset):
        """Drop every record at ``offset`` and above; returns how many went."""
        offset = max(offset, self.log_start_offset)
        removed = self.leo - offset
        if removed > 0:
            del self.records[offset - self.log_start_offset:]
            self.leo = offset
            runs = self.runs
            while runs and runs[-1][0] >= offset:
                runs.pop()
            if runs and runs[-1][1] > offset:
                runs[-1][1] = offset
        else:
            removed = 0
        self.truncate_epochs_from_end(self.leo)
        if self.hw > self.leo:
            self.hw = self.leo
        if self.flushed_offset > self.leo:
            self.flushed_offset = self.leo
        leo = self.leo
        self.dirty_marks = [(t, min(mark, leo)) for t, mark in self.dirty_marks]
        return removed

    def _extend_runs(self, epoch, start, end):
        runs = self.runs
        if runs and runs[-1][2] == epoch and runs[-1][1] == start:
            runs[-1][1] = end
        else:
            runs.append([start, end, epoch])

    def flush(self):
        self.flushed_offset = self.leo
        self.unflushed_since = 0

    def writeback(self, now_ms, expire_ms):
        """The OS wrote back every page dirtied more than ``expire_ms`` ago: each mark says
        "at time t the log ended at offset o", so marks older than the expiry are now durable."""
        marks = self.dirty_marks
        marks.append((now_ms, self.leo))
        while marks and marks[0][0] <= now_ms - expire_ms:
            _t, offset = marks.pop(0)
            if offset > self.flushed_offset:
                self.flushed_offset = min(offset, self.leo)

    # -- leader epoch cache (LeaderEpochFileCache, §1.3) -------------------------------------
    def assign_epoch(self, epoch, start_offset):
        cache = self.epoch_cache
        if cache:
            last_epoch, last_start = cache[-1]
            if last_epoch == epoch and start_offset >= last_start:
                return
            while cache and (cache[-1][0] >= epoch or cache[-1][1] >= start_offset):
                cache.pop()
        cache.append([epoch, start_offset])

    def truncate_epochs_from_end(self, end_offset):
        cache = self.epoch_cache
        while cache and cache[-1][1] >= end_offset:
            cache.pop()

    def end_offset_for(self, requested_epoch, era):
        """OffsetsForLeaderEpoch as answered by this replica: (epoch, end_offset) (§1.3).

        0.11-1.1 answer only an offset (the epoch is reported UNDEFINED); 2.0 also returns the
        largest epoch <= requested; from 2.1 (KAFKA-7415) an epoch below the first cached one
        answers (requested, first start offset) instead of UNDEFINED.
        """
        return end_offset_for(self.epoch_cache, requested_epoch, self.leo, era)


def end_offset_for(cache, requested, leo, era):
    if requested == UNDEFINED or not cache:
        return UNDEFINED, UNDEFINED
    latest = cache[-1][0]
    if requested == latest:
        return (requested if era.truncation == "kip279" else UNDEFINED), leo
    if requested > latest:
        return UNDEFINED, UNDEFINED
    if requested < cache[0][0]:
        if era.epoch_entry_on_become_leader:
            return requested, cache[0][1]
        return UNDEFINED, UNDEFINED
    floor_epoch = UNDEFINED
    for epoch, start in cache:
        if epoch > requested:
            if era.truncation == "kip279":
                return floor_epoch, start
            return UNDEFINED, start
        floor_epoch = epoch
    return UNDEFINED, UNDEFINED  # unreachable: requested < latest guarantees a larger epoch

"""Rows that cross a process boundary in small pickled chunks.

A save's rows are encoded in a job's worker process and written by the server (one write lock,
``runs.insert_prepared``). Sent as one list, a minute of bench-medium (45,000 event rows,
12 MB) is unpickled by the server in one C call of ~15 ms that holds the interpreter lock
throughout — longer on a busy machine, where the thread holding the lock also waits for a core.
Every other request of the server waits behind it (it was most of ``/healthz``'s p99 under
heavy saves, docs/performance.md). Packed, the server receives a list of byte strings (a
copy, not a parse) and unpickles ``CHUNK_ROWS`` rows at a time while it writes them, so the lock
is never held for more than about a third of a millisecond by this work.
"""
import itertools
import pickle

CHUNK_ROWS = 1000


class PackedRows:
    """A read-only sequence of row tuples, kept as pickled chunks; iterate it to get the rows."""

    __slots__ = ("_chunks", "_length")

    def __init__(self, rows):
        self._chunks, self._length = [], 0
        for chunk in batches(rows, CHUNK_ROWS):
            self._chunks.append(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
            self._length += len(chunk)

    def __len__(self):
        return self._length

    def __iter__(self):
        for chunk in self._chunks:
            yield from pickle.loads(chunk)

    def __eq__(self, other):
        if isinstance(other, PackedRows):
            return self._chunks == other._chunks
        return isinstance(other, (list, tuple)) and len(other) == self._length and list(self) == list(other)

    __hash__ = None

    def __getstate__(self):
        return self._chunks, self._length

    def __setstate__(self, state):
        self._chunks, self._length = state

    def __repr__(self):
        return f"PackedRows({self._length} rows in {len(self._chunks)} chunks)"


def batches(rows, size):
    """``rows`` (any iterable) as lists of at most ``size``, in order."""
    rows = iter(rows)
    while batch := list(itertools.islice(rows, size)):
        yield batch

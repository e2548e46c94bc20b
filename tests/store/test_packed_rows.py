"""A save's rows cross from the job's worker process to the server in small pickled chunks
(app/store/packed.py): the server must never unpickle a whole run in one C call that holds the
interpreter lock, and what it writes must be the same rows, in the same order."""
import pickle

from sqlalchemy import select

from app.jobwork import saved_run_rows
from app.store import packed, runs
from app.store.db import reading
from app.store.models import RunEvent
from app.store.packed import CHUNK_ROWS, PackedRows

from .test_runs import events, scenario


def rows(n):
    return [(i, "high_watermark", "t", i % 3, i % 5, f'{{"hw":{i}}}') for i in range(n)]


def test_packed_rows_give_back_every_row_in_order_a_chunk_at_a_time():
    plain = rows(2 * CHUNK_ROWS + 7)
    packed_rows = PackedRows(plain)
    assert len(packed_rows) == len(plain) and list(packed_rows) == plain
    assert packed_rows == plain and packed_rows == PackedRows(plain) and packed_rows != plain[:-1]
    chunks = [pickle.loads(chunk) for chunk in packed_rows.__getstate__()[0]]
    assert [len(c) for c in chunks] == [CHUNK_ROWS, CHUNK_ROWS, 7]
    assert not PackedRows([]) and list(PackedRows([])) == []


def test_across_a_process_boundary_the_rows_stay_packed_until_read():
    sent = pickle.dumps(PackedRows(rows(3 * CHUNK_ROWS)), protocol=pickle.HIGHEST_PROTOCOL)
    received = pickle.loads(sent)
    # what one unpickling produced: byte strings, not 3,000 tuples of strings
    assert all(type(chunk) is bytes for chunk in received.__getstate__()[0])
    assert len(received.__getstate__()[0]) == 3 and list(received) == rows(3 * CHUNK_ROWS)


def test_a_job_workers_save_rows_come_packed():
    doc = {**scenario(), "duration_ms": 10000,
           "clients": [{"name": "p", "type": "producer", "topic": "t", "rate_per_s": 200, "acks": "all"}]}
    prepared = saved_run_rows(doc, doc["duration_ms"], {}, "save", "t", "link")
    assert isinstance(prepared["events"], PackedRows) and len(prepared["events"]) > CHUNK_ROWS


def test_packed_rows_are_written_as_the_same_rows_as_a_list(store):
    facts = dict(scenario=scenario(), engine_version="1.0.0", end_ms=60000, finished=True,
                 summary={"records_total": 1, "acked": 1, "failed": 0, "lost": 0, "violations": 0},
                 events=events(2 * CHUNK_ROWS + 3), violations=[])
    as_list = runs.prepare_run(**facts)
    as_packed = {**as_list, "events": PackedRows(as_list["events"])}
    ids = [runs.insert_prepared(store, prepared)["id"] for prepared in (as_list, as_packed)]
    columns = (RunEvent.seq, RunEvent.t_ms, RunEvent.type, RunEvent.topic, RunEvent.partition,
               RunEvent.broker, RunEvent.details)
    with reading(store) as conn:
        stored = [conn.execute(select(*columns).where(RunEvent.run_id == i).order_by(RunEvent.seq)).all()
                  for i in ids]
    assert len(stored[0]) == 2 * CHUNK_ROWS + 4 and stored[0] == stored[1]


def test_batches_cut_any_iterable_in_order():
    assert list(packed.batches(iter(range(7)), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(packed.batches([], 3)) == []

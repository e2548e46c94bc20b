"""The writer of a room worker's input (app/rooms/pipe_writer.py), on a real pipe whose other
end reads nothing: sends never wait, a full queue refuses large messages but still takes small
ones (a lost leave kept a room watched for good), and the writer closes the pipe itself."""
import os
import threading

import pytest

from app.rooms import pipe_writer


@pytest.fixture
def unread_pipe(monkeypatch):
    monkeypatch.setattr(pipe_writer, "MAX_QUEUED_BYTES", 200_000)
    read_end, write_end = os.pipe()
    stuck = threading.Event()
    writer = pipe_writer.PipeWriter(os.fdopen(write_end, "wb"), "test-writer", lambda _why: stuck.set(),
                                    progress_since=lambda _t: True)      # never judged stuck here
    yield writer
    writer.end()
    os.close(read_end)


def test_a_full_queue_refuses_large_messages_and_still_takes_small_ones(unread_pipe):
    accepted = 0
    with pytest.raises(pipe_writer.Full) as full:
        for _ in range(100):                # the pipe holds 64 kB, the queue 200 kB past it
            unread_pipe.send(b"x" * 50_000)
            accepted += 1
    assert 4 <= accepted <= 6 and full.value.size == 50_000
    assert all(unread_pipe.send(b"leave" * 20) for _ in range(50)), "a small message was refused"
    with pytest.raises(pipe_writer.Full):
        unread_pipe.send(b"x" * 300_000)    # larger than the whole queue


def test_the_writer_closes_the_pipe_and_refuses_sends_after_its_end(unread_pipe):
    assert unread_pipe.send(b"setup")
    unread_pipe.end()
    assert not unread_pipe.send(b"late")
    thread = unread_pipe._thread
    if thread is not None:
        thread.join(5)
    assert unread_pipe._stream.closed

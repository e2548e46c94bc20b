"""Request deadlines (engine/core/deadlines.py): per-delay FIFO queues swept by one timer. An answered
request's deadline leaves its queue when the next deadline is set there, not at its own expiry
(30 s later: long enough to outlive PyPy's nursery); an unanswered one still fires at exactly
request.timeout.ms (Kafka's NetworkClient default 30000)."""
from engine.core.network import Network
from engine.core.node import Node
from engine.core.rng import Streams
from engine.core.scheduler import new_scheduler

TIMEOUT_MS = 30000


class _Host:
    def __init__(self):
        self.scheduler = new_scheduler()
        self.network = Network(self.scheduler, Streams(0).fork("network"))


class _Peer(Node):
    """Answers a Ping when ``echo``; otherwise never answers (a handler-less request is dropped)."""

    def __init__(self, node_id, host, echo):
        Node.__init__(self, node_id, host)
        self.answers = []
        if echo:
            self.handlers = {"Ping": lambda env: self.reply(env, {"error": None})}
        host.network.add_node(node_id, self)

    def ask(self, target, label):
        return self.request(target, "Ping", {}, TIMEOUT_MS, self._answered, label)

    def _answered(self, label, body, error):
        self.answers.append((self.scheduler.now_ms, label, error))


def _cluster():
    host = _Host()
    return host, _Peer(0, host, False), _Peer(1, host, True), _Peer(2, host, False)


def test_an_answered_request_leaves_the_queue_when_the_next_deadline_is_set():
    host, asker, _echo, _silent = _cluster()
    first = asker.ask(1, "first")
    host.scheduler.run_until(10)           # answered one round trip (2 x 1 ms) later
    assert asker.answers == [(2, "first", None)]
    queue = asker._deadlines[TIMEOUT_MS]
    assert [entry[2] for entry in queue] == [first]   # moot, but nothing was set since
    second = asker.ask(1, "second")
    assert [entry[2] for entry in queue] == [second]  # the answered one is gone: one in the queue
    host.scheduler.run_until(20)
    third = asker.ask(1, "third")
    assert [entry[2] for entry in queue] == [third]   # steady state: the queue never grows


def test_an_unanswered_request_still_times_out_at_its_deadline_and_blocks_no_later_one():
    host, asker, _echo, _silent = _cluster()
    lost = asker.ask(2, "lost")                 # t=0, to a peer that never answers
    host.scheduler.run_until(5)
    asker.ask(1, "answered")
    host.scheduler.run_until(10)
    last = asker.ask(1, "last")
    queue = asker._deadlines[TIMEOUT_MS]
    # only the oldest deadline is looked at: the moot one behind the live front stays until the
    # sweep, which drops it (the same entries a sweep without this housekeeping would drop)
    assert [entry[2] for entry in queue][0] == lost and len(queue) == 3
    host.scheduler.run_until(TIMEOUT_MS - 1)
    assert [a[1:] for a in asker.answers] == [("answered", None), ("last", None)]
    host.scheduler.run_until(TIMEOUT_MS)
    assert asker.answers[-1] == (TIMEOUT_MS, "lost", "REQUEST_TIMED_OUT")
    assert [entry[2] for entry in queue] == [] and last not in asker.pending

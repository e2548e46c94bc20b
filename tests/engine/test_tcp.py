"""TCP retransmission after a heal and request timeouts that close connections (docs/model.md
§16, network; engine/core/tcp.py). Numbers: Linux TCP_RTO_MIN 200 ms doubling per retransmission
(tcp_retransmit_timer, RFC 6298 rule 5.5), TCP_RTO_MAX 120 s, tcp_retries2 15, tcp_orphan_retries
8; Kafka's request.timeout.ms 30000 and reconnect.backoff.ms 50."""
from engine.simulation import Simulation
from engine.core.tcp import retransmission_at, retransmission_offsets


def test_the_retransmission_schedule():
    assert retransmission_offsets(10) == [200, 600, 1400, 3000, 6200, 12600, 25400, 51000,
                                          102200, 204600]
    offsets = retransmission_offsets()
    assert offsets[10:] == [324600, 444600, 564600, 684600, 804600]   # capped at 120 s
    assert offsets[-1] + 120000 == 924600      # tcp_retries2 = 15: the kernel gives up at 924.6 s
    assert retransmission_at(1000, 21000) == 26400          # a 20 s cut: 25.4 s, not 20 s
    assert retransmission_at(1000, 2000) == 2400
    assert retransmission_at(1000, 1600) == 1600            # an instant on the heal itself counts
    assert retransmission_at(0, 804600) == 804600 and retransmission_at(0, 804601) is None
    assert retransmission_at(0, 51000, retries=8) == 51000 and retransmission_at(0, 51001, retries=8) is None


def cut_and_heal(heal_ms, *extra):
    return {"seed": 1, "kafka_version": "2.6", "brokers": 3,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1"}],
            "timeline": [{"at_ms": 3000, "op": "produce", "topic": "t", "producer": "p"},
                         {"at_ms": 10000, "op": "cut", "from": "p", "to": 0},
                         {"at_ms": 10000, "op": "produce", "topic": "t", "producer": "p"},
                         *extra,
                         {"at_ms": heal_ms, "op": "heal"}],
            "duration_ms": 100000}


def run_watching(doc):
    sim = Simulation(doc)
    seen = []
    sim.network.observer = lambda kind, env: seen.append((sim.now_ms, kind, env.type, env.sent_at_ms)) \
        if env.source == "p" and env.target == 0 and env.type == "Produce" else None
    return sim, seen


def test_a_20_s_cut_delivers_at_the_next_retransmission_after_the_heal():
    sim, seen = run_watching(cut_and_heal(30000))
    r = sim.run()
    # sent at 10.0 s into the cut; retransmitted at 10.2, 10.6, 11.4, 13.0, 16.2, 22.6 s (cut)
    # and 35.4 s: it arrives one link latency (1 ms) later, not at the heal (30 s)
    assert (35401, "deliver", "Produce", 10000) in seen
    assert not [s for s in seen if s[1] == "deliver" and 10000 <= s[0] < 35401]
    record = r["records"][1]
    assert (record["status"], record["acked_ms"]) == ("acked", 35402)


def test_a_request_timeout_disconnects_and_the_retry_goes_on_a_new_connection():
    # Two requests in flight on the cut connection, sent at 10.0 and 10.01 s. The idle producer's
    # poll, begun with the second send, returns at 40.01 s and finds the first past
    # request.timeout.ms (30010 > 30000; docs/model.md §6, the client's request timeout): the
    # producer closes the connection, the second fails with it at once (NetworkClient cancels
    # every in-flight request of a disconnected node), and both batches are retried.
    sim, seen = run_watching(cut_and_heal(70000, {"at_ms": 10010, "op": "produce", "topic": "t",
                                                  "producer": "p"}))
    producer = sim.clients["p"]
    sim.advance_to(40009)
    assert len(producer.pending) == 2
    sim.advance_to(40010)
    assert not [c for c, e in producer.pending.items() if e[2] == 0]
    assert producer.node_backoff[0] == (40060, 50)      # reconnect.backoff.ms 50, one step
    r = sim.run()
    retry = [s for s in seen if s[1] == "hold" and s[3] > 40000]
    assert retry and 40060 <= retry[0][3] < 40200        # reconnects after the backoff, still cut
    # The originals are orphans of the closed connection: the kernel retransmits them only 8
    # times (the last at 51.0 s after their send, before the heal at 70 s), then they are gone.
    assert [s[3] for s in seen if s[1] == "drop"] == [10000, 10010]
    # The retry, sent at 40.11 s, is itself timed out when the producer's idle poll returns at
    # 70.112 s (30000 ms after the metadata answer at 40.112 s ended its previous poll); the one
    # after it goes once the link is healed.
    p1, p2 = r["records"][1:]
    assert p1["status"] == p2["status"] == "acked" and (p1["acked_ms"], p2["acked_ms"]) == (70214, 70216)
    log = [x["id"] for x in r["partitions"]["t-0"]["replica_state"]["0"]["log"]]
    assert log[:3] == ["p-0", "p-1", "p-2"]


def test_an_orphaned_request_still_arrives_within_its_retransmissions():
    # Healed 35 s after the sends: the originals (orphans since the timeout at 40.01 s, as in the
    # test above; retransmitted at 10 + 51.0 s) still get through after the retries did — and the
    # broker appends them again. Without idempotence those are duplicates, as in Kafka.
    sim, seen = run_watching(cut_and_heal(45000, {"at_ms": 10010, "op": "produce", "topic": "t",
                                                  "producer": "p"}))
    r = sim.run()
    delivered = [(s[0], s[3]) for s in seen if s[1] == "deliver" and s[0] > 10000]
    assert delivered[0] == (46311, 40110)   # the retry: its retransmission at 40.11 + 6.2 s
    assert (61001, 10000) in delivered and (61001, 10010) in delivered
    log = [x["id"] for x in r["partitions"]["t-0"]["replica_state"]["0"]["log"]]
    assert log == ["p-0", "p-1", "p-2", "p-1", "p-2"]

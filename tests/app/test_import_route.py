"""POST /api/import/describe: pasted tool output -> scenario + notes; malformed lines refused by
number; this server's limits and the body bound refused by name (413 for size); same-origin."""
from engine.scenario.document import load
from engine.scenario.import_text import MAX_TEXT_BYTES
from tests.engine.import_samples import DESCRIBE_0_10, DESCRIBE_3_7, QUORUM_3_7, as_pasted

URL = "/api/import/describe"


def test_pasted_describe_becomes_a_scenario_with_notes(http):
    reply = http.post(URL, json={"describe": as_pasted(DESCRIBE_0_10), "kafka_version": "0.10", "name": "prod"})
    assert reply.status_code == 200, reply.json
    body = reply.json
    assert body["summary"] == {"brokers": 3, "topics": 2, "partitions": 4}
    scenario = body["scenario"]
    assert scenario["name"] == "prod" and scenario["kafka_version"] == "0.10"
    assert scenario["topics"][0]["assignment"] == {"0": [1, 2], "1": [2, 0], "2": [0, 1]}
    assert any("broker 0 was out of the ISR of 2 partitions" in n for n in body["notes"])
    load(scenario)


def test_quorum_output_gives_the_controllers(http):
    reply = http.post(URL, json={"describe": DESCRIBE_3_7, "quorum": QUORUM_3_7, "kafka_version": "4.1"})
    assert reply.status_code == 200 and reply.json["scenario"]["controllers"] == [3000, 3001, 3002]


def test_a_malformed_line_is_400_naming_the_line(http):
    text = DESCRIBE_0_10.replace("Isr: 1,2\n", "Isr: 1,2,x\n", 1)
    reply = http.post(URL, json={"describe": text, "kafka_version": "2.6"})
    assert reply.status_code == 400
    error = reply.json["error"]
    assert error["field"] == "describe line 2" and "'x' is not a whole number" in error["message"]


def test_bad_bodies_are_refused_by_field(http):
    assert http.post(URL, json={"kafka_version": "2.6"}).json["error"]["field"] == "describe"
    assert http.post(URL, json={"describe": 5, "kafka_version": "2.6"}).json["error"]["field"] == "describe"
    reply = http.post(URL, json={"describe": DESCRIBE_0_10, "kafka_version": "9.9"})
    assert reply.status_code == 400 and reply.json["error"]["field"] == "kafka_version"
    assert http.post(URL, json={"describe": DESCRIBE_0_10, "kafka_version": "2.6", "extra": 1}).status_code == 400


def test_over_this_servers_broker_limit_is_refused_naming_it(http):
    wide = "Topic: w\tPartitionCount: 20\tReplicationFactor: 1\tConfigs: \n" + "\n".join(
        f"\tTopic: w\tPartition: {p}\tLeader: {p}\tReplicas: {p}\tIsr: {p}" for p in range(20))
    reply = http.post(URL, json={"describe": wide, "kafka_version": "2.6"})
    assert reply.status_code == 400
    assert reply.json["error"]["field"] == "brokers" and reply.json["error"]["allowed"] == "at most 16 on this server"


def test_a_text_over_1_mb_is_413_naming_the_limit(http):
    # bigger than MAX_CONTENT_LENGTH (300,000 bytes) but inside this route's body bound
    reply = http.post(URL, json={"describe": "x" * (MAX_TEXT_BYTES + 1), "kafka_version": "2.6"})
    assert reply.status_code == 413
    assert reply.json["error"] == {"field": "describe", "message": "is 1,000,001 bytes",
                                   "allowed": "at most 1,000,000 bytes"}


def test_a_body_over_the_routes_bound_is_413(http):
    reply = http.post(URL, json={"describe": "x" * 3_100_000, "kafka_version": "2.6"})
    assert reply.status_code == 413
    assert reply.json["error"]["allowed"] == "at most 3,000,000 bytes in one request"


def test_other_routes_keep_the_default_body_bound(http):
    assert http.post("/api/rooms", json={"scenario": {"name": "x" * 400_000}}).status_code == 413


def test_a_cross_site_post_is_refused(http):
    reply = http.post(URL, json={"describe": DESCRIBE_0_10, "kafka_version": "2.6"},
                      headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert reply.status_code == 403

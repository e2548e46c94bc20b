"""Every refusal a user can meet over the API and the socket, in 中文 (issue 33): each bad input
below is sent twice, in English and in zh-CN; the Chinese reply has the same ``field`` and a
message (and, where the English has words, an ``allowed``) in Chinese — values and Kafka's names
kept. A refusal whose message no catalog entry matches fails here."""
import json
import re

import pytest

HAN = re.compile(r"[\u4e00-\u9fff]")
ZH = {"Accept-Language": "zh-CN"}
EN = {"Accept-Language": "en"}
BASE = {"brokers": 3, "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3}]}


def scenario(**over):
    return {"scenario": {**BASE, **over}}


#: (method, path, JSON body or raw text): what a page or a script can send
HTTP = [
    ("post", "/api/links", {"scenario": {"brokers": 0}}),
    ("post", "/api/links", scenario(bogus=1)),
    ("post", "/api/links", scenario(kafka_version="9.9")),
    ("post", "/api/links", scenario(config={"no.such.key": 1})),
    ("post", "/api/links", scenario(config={"broker.id": 1})),
    ("post", "/api/links", scenario(config={"unclean.leader.election.enable": "maybe"})),
    ("post", "/api/links", scenario(topics=[{"name": "bad name!", "partitions": 1}])),
    ("post", "/api/links", scenario(topics=[{"name": "o", "partitions": 1, "replication_factor": 9}])),
    ("post", "/api/links", scenario(topics=[{"name": "o", "partitions": 2, "assignment": {"0": [0, 0]}}])),
    ("post", "/api/links", scenario(clients=[{"name": "p1", "type": "robot"}])),
    ("post", "/api/links", scenario(clients=[{"name": "p1", "type": "producer", "topic": "orders", "acks": "some"}])),
    ("post", "/api/links", scenario(clients=[{"name": "p1", "type": "producer", "topic": "nope"}])),
    ("post", "/api/links", scenario(timeline=[{"at_ms": 10, "op": "explode"}])),
    ("post", "/api/links", scenario(timeline=[{"at_ms": 10, "op": "crash", "broker": 9}])),
    ("post", "/api/links", scenario(timeline=[{"at_ms": 10, "op": "crash", "broker": 1, "mode": "gently"}])),
    ("post", "/api/links", scenario(timeline=[{"at_ms": 10, "op": "cut", "from": 1, "to": 1}])),
    ("post", "/api/links", scenario(timeline=[{"at_ms": 10, "op": "controller_crash"}], kafka_version="2.6")),
    ("post", "/api/links", scenario(racks={"1": ""})),
    ("post", "/api/links", scenario(duration_ms="long")),
    ("post", "/api/links", {"run": "x"}),
    ("post", "/api/links", {**scenario(), "lang": "fr"}),
    ("post", "/api/links", "{not json"),
    ("post", "/api/links", "[" * 200 + "]" * 200),
    ("post", "/api/compare", {"a": 5, "b": 6}),
    ("post", "/api/compare", {"a": {"library": "nope"}, "b": {"library": "nope"}}),
    ("post", "/api/compare", {"a": {"thing": 1}, "b": {"thing": 2}}),
    ("post", "/api/compare", {"a": {"library": "broker-failure-clean-election"}, "b": {"variant": {"colour": 1}}}),
    ("get", "/api/jobs/not-a-job-id-at-all", None),
    ("get", "/api/runs?order=sideways", None),
    ("get", "/api/runs?limit=-4", None),
    ("post", "/api/rooms", {"library": "nope"}),
    ("get", "/api/rooms/zzzz", None),
    ("post", "/api/runs", {"nothing": 1}),
]

#: socket events: (event, payload), sent after ``create`` when the event needs a room
SOCKET_NO_ROOM = [
    ("create", {"scenario": {**BASE, "topics": [{"name": "bad name!", "partitions": 1}]}}),
    ("create", {"library": "nope"}),
    ("create", {"library": "broker-failure-clean-election", "scenario": BASE}),
    ("create", {"colour": 1}),
    ("command", {"op": "crash", "broker": 1}),
    ("join", {"room": "!"}),
]
SOCKET_IN_ROOM = [
    ("command", {"op": "crash", "broker": 9}),
    ("command", {"op": "fly"}),
    ("command", {"op": "crash", "broker": 1, "at_ms": 5}),
    ("command", {"op": "create_topic", "topic": "orders", "partitions": 1, "replication_factor": 1}),
    ("command", {"op": "set_config", "key": "broker.id", "value": 3}),
    ("command", {"op": "produce", "producer": "nobody", "count": 1}),
    ("control", {"action": "dance"}),
    ("control", {"action": "speed", "value": "warp"}),
    ("control", {"action": "run_to", "value": -5}),
    ("ledger", {"status": "sideways"}),
    ("ledger", {"page": -1}),
    ("reconfigure", {}),
    ("reconfigure", {"kafka_version": "9.9"}),
    ("load", {}),
    ("inspect", {"partition": "nope-7"}),
]


def _http(http, method, path, body, headers):
    if body is None:
        return getattr(http, method)(path, headers=headers).get_json()
    if isinstance(body, str):
        return getattr(http, method)(path, data=body, content_type="application/json", headers=headers).get_json()
    return getattr(http, method)(path, json=body, headers=headers).get_json()


def _words(text):
    """The English words of a message, outside quotes, slots and identifiers (a list of names,
    ``newest, oldest``, is names)."""
    if re.fullmatch(r"[\w.-]+(, [\w.-]+)*", text or ""):
        return []
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\{[^}]*\}|\S*[_.=/\\]\S*", "", text or "")
    return [w for w in re.findall(r"\b[a-z]{3,}\b", text) if w not in {"all", "acks", "max"}]


def assert_chinese(en, zh):
    assert en["ok"] is False and zh["ok"] is False, (en, zh)
    en, zh = en["error"], zh["error"]
    assert zh["field"] == en["field"]
    assert HAN.search(zh["message"]), (en, zh)
    if _words(en.get("allowed")):
        assert HAN.search(zh["allowed"] or ""), (en, zh)
    for value in re.findall(r"\b\d+\b", en["message"]):          # the values come through
        assert value in zh["message"], (en, zh)


@pytest.mark.parametrize("method, path, body", HTTP, ids=[f"{m} {p} {json.dumps(b)[:40]}" for m, p, b in HTTP])
def test_an_api_refusal_in_chinese(http, method, path, body):
    assert_chinese(_http(http, method, path, body, EN), _http(http, method, path, body, ZH))


def _emit(app, sio, headers, event, payload, in_room):
    client = sio.test_client(app, headers=headers)
    try:
        if in_room:
            assert client.emit("create", {"scenario": BASE}, callback=True)["ok"]
        return client.emit(event, payload, callback=True)
    finally:
        client.disconnect()


@pytest.mark.parametrize("event, payload, in_room", [(e, p, False) for e, p in SOCKET_NO_ROOM]
                         + [(e, p, True) for e, p in SOCKET_IN_ROOM],
                         ids=[f"{e} {json.dumps(p)[:40]}" for e, p in SOCKET_NO_ROOM + SOCKET_IN_ROOM])
def test_a_socket_refusal_in_chinese(app, sio, event, payload, in_room):
    assert_chinese(_emit(app, sio, EN, event, payload, in_room), _emit(app, sio, ZH, event, payload, in_room))

"""Kafka's words for history entries whose ``reason`` alone is terse (docs/scenario-format.md §4.1).

``explain(event)`` is used by the counterexample narration (engine/tools/search.py); the web page says
the same in static/js/render/timeline.js (explainAlterPartition). Pure text, no behaviour.
"""

#: AlterIsr / AlterPartition answers and what the leader does next (docs/model.md §17.4).
ALTER_ERRORS = {
    "FENCED_LEADER_EPOCH": "the controller knows a newer leader epoch; the partition stays pending "
                           "until the LeaderAndIsr of the new epoch arrives",
    "INVALID_UPDATE_VERSION": "the partition epoch (zkVersion) sent is not the znode's; the leader "
                              "waits for the LeaderAndIsr that brings the new one",
    "INELIGIBLE_REPLICA": "KIP-841: a proposed replica is shutting down or not alive; the leader "
                          "goes back to its committed ISR",
    "NOT_CONTROLLER": "that broker is not the controller; the request goes to the controller named "
                      "in the metadata",
    "STALE_BROKER_EPOCH": "the leader's broker epoch is stale; the request is rebuilt and sent again",
}


def explain_alter_partition(e):
    api = e.get("api", "AlterIsr")
    tp = f"{e['topic']}-{e['partition']}"
    isr = e.get("proposed_isr")
    at = f"leaderEpoch {e.get('leader_epoch')}, partitionEpoch {e.get('partition_epoch')}"
    if e.get("phase") == "sent":
        return (f"leader {e['broker']} sends {api} for {tp} to the controller: ISR {isr} ({at}); "
                "the ISR stays pending, acks=all still counts the committed ISR")
    if not e.get("error"):
        return (f"the controller wrote ISR {e.get('isr', isr)} of {tp} to ZooKeeper (zkVersion "
                f"{e.get('new_partition_epoch')}) and answered {api}: the leader commits it")
    why = ALTER_ERRORS.get(e["error"], "the leader keeps its committed ISR")
    return f"the controller refused {api} for {tp} (ISR {isr}, {at}): {e['error']} - {why}"


def explain(e):
    if e["type"] == "alter_partition":
        return explain_alter_partition(e)
    return e.get("reason", "")

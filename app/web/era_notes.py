"""What distinguishes each era, for the era pickers (docs/scenario-format.md §4 tables).

``short`` fits a drop-down option; ``text`` is the sentence shown under it. ``isr_path`` says
who writes an ISR change: the leader itself plus /isr_change_notification ("zookeeper", up to
2.6) or the controller after an AlterIsr / AlterPartition request ("controller", 2.7+,
docs/model.md §17); in KRaft eras ("kraft": true) the active controller of a Raft quorum writes
it to the metadata log (docs/scenario-format.md §4.2).
"""
from engine import eras

from ..i18n.errors import N_, translate_message

NOTES = {
    "0.10": ("0.10.2", N_("truncate to HW"), "zookeeper",
             N_("Followers truncate to their high watermark on becoming follower (pre-KIP-101); "
             "unclean leader election on by default. ISR changes: leader writes ZooKeeper, "
             "/isr_change_notification.")),
    "1.1": ("1.1", N_("KIP-101 epochs"), "zookeeper",
            N_("Leader epochs (KIP-101): truncation asks OffsetsForLeaderEpoch for an end offset; "
            "unclean election off by default.")),
    "2.0": ("2.0.0", N_("KIP-279"), "zookeeper",
            N_("KIP-279: the leader returns (epoch, end offset) and followers walk epochs "
            "(rules of 2.0.0).")),
    "2.0.1": ("2.0.1", N_("KIP-279 + fixes"), "zookeeper",
              N_("2.0.0 plus the 2.0.1 backports KAFKA-7128 (joining the ISR needs the epoch start "
              "offset), KAFKA-7164 (every LeaderAndIsr restarts the fetcher) and KAFKA-7415.")),
    "2.4": ("2.4", N_("KIP-320 fencing"), "zookeeper",
            N_("KIP-320 fencing (FENCED/UNKNOWN_LEADER_EPOCH), broker epochs; producer retries "
            "2147483647 and delivery.timeout.ms 120000.")),
    "2.6": ("2.6", N_("ISR via ZooKeeper"), "zookeeper",
            N_("The last era where the leader writes ISR changes to ZooKeeper itself and the controller "
            "learns of them via /isr_change_notification (5-7.5 s later); replica.lag.time.max.ms "
            "30000, zookeeper.session.timeout.ms 18000.")),
    "2.7": ("2.7.2", N_("AlterIsr"), "controller",
            N_("KIP-497: the leader asks the controller with AlterIsr (sent by a 50 ms task) and keeps "
            "the ISR pending until it answers; no /isr_change_notification. KAFKA-13091 and "
            "KAFKA-12686 present.")),
    "3.0": ("3.0.2", N_("AlterIsr, acks=all"), "controller",
            N_("As 2.7, AlterIsr sent at once; producer acks=all and idempotence by default (KIP-679); "
            "KAFKA-13091 still present.")),
    "3.3": ("3.3.2", N_("AlterPartition"), "controller",
            N_("AlterPartition: the HW advances on commit; KIP-841 refuses shutting-down or dead "
            "replicas (INELIGIBLE_REPLICA); KIP-704 leader recovery after an unclean election.")),
    "3.7": ("3.7.x", N_("HW min-ISR gate"), "controller",
            N_("As 3.3, plus KAFKA-15583: the HW does not move while the ISR is below "
            "min.insync.replicas.")),
    "3.9-kraft": ("3.9.0", N_("KRaft"), "controller",
                  N_("KRaft: a Raft quorum of controllers and a metadata log instead of ZooKeeper; "
                  "brokers heartbeat and are fenced 9 s after the last one; no ELR; unclean "
                  "election honoured by the controller.")),
    "4.1": ("4.1.0", N_("KRaft + ELR"), "controller",
            N_("As 3.9-kraft with Eligible Leader Replicas on by default (KIP-966), pre-vote "
            "(KIP-996) and a periodic fencing check.")),
}
KRAFT = {"3.9-kraft", "4.1", "3.5-kraft", "4.0"}


def _note(v):
    """The era's note; an era added to the engine before its note reads as its bare name."""
    fields = NOTES.get(v) or (v, v, "controller" if v in KRAFT else "zookeeper", "")
    note = dict(zip(("rules_of", "short", "isr_path", "text"), fields))
    for key in ("short", "text"):            # in the reader's language (app/i18n)
        note[key] = translate_message(note[key])
    return note


def era_notes():
    """{version: {rules_of, short, isr_path, text, api, kraft}} for every era of
    engine.eras.VERSIONS; ``api`` is the request's name ("AlterIsr" / "AlterPartition") or None
    before 2.7; ``kraft`` says whether a controller quorum replaces ZooKeeper."""
    out = {}
    for v in eras.VERSIONS:
        era = eras.ERAS[v]
        out[v] = dict(_note(v), api=era.alter_isr_api if getattr(era, "alter_isr", False) else None,
                      kraft=bool(getattr(era, "kraft", v in KRAFT)))
    return out

"""What distinguishes each era, for the era pickers (docs/scenario-format.md §4 tables).

``short`` fits a drop-down option; ``text`` is the sentence shown under it. ``isr_path`` says
who writes an ISR change: the leader itself plus /isr_change_notification ("zookeeper", up to
2.6) or the controller after an AlterIsr / AlterPartition request ("controller", 2.7+,
docs/model.md §17).
"""
from engine import eras

NOTES = {
    "0.10": ("0.10.2", "truncate to HW", "zookeeper",
             "Followers truncate to their high watermark on becoming follower (pre-KIP-101); "
             "unclean leader election on by default. ISR changes: leader writes ZooKeeper, "
             "/isr_change_notification."),
    "1.1": ("1.1", "KIP-101 epochs", "zookeeper",
            "Leader epochs (KIP-101): truncation asks OffsetsForLeaderEpoch for an end offset; "
            "unclean election off by default."),
    "2.0": ("2.0.0", "KIP-279", "zookeeper",
            "KIP-279: the leader returns (epoch, end offset) and followers walk epochs "
            "(rules of 2.0.0)."),
    "2.0.1": ("2.0.1", "KIP-279 + fixes", "zookeeper",
              "2.0.0 plus the 2.0.1 backports KAFKA-7128 (joining the ISR needs the epoch start "
              "offset), KAFKA-7164 (every LeaderAndIsr restarts the fetcher) and KAFKA-7415."),
    "2.4": ("2.4", "KIP-320 fencing", "zookeeper",
            "KIP-320 fencing (FENCED/UNKNOWN_LEADER_EPOCH), broker epochs; producer retries "
            "2147483647 and delivery.timeout.ms 120000."),
    "2.6": ("2.6", "ISR via ZooKeeper", "zookeeper",
            "The last era where the leader writes ISR changes to ZooKeeper itself and the controller "
            "learns of them via /isr_change_notification (5-7.5 s later); replica.lag.time.max.ms "
            "30000, zookeeper.session.timeout.ms 18000."),
    "2.7": ("2.7.2", "AlterIsr", "controller",
            "KIP-497: the leader asks the controller with AlterIsr (sent by a 50 ms task) and keeps "
            "the ISR pending until it answers; no /isr_change_notification. KAFKA-13091 and "
            "KAFKA-12686 present."),
    "3.0": ("3.0.2", "AlterIsr, acks=all", "controller",
            "As 2.7, AlterIsr sent at once; producer acks=all and idempotence by default (KIP-679); "
            "KAFKA-13091 still present."),
    "3.3": ("3.3.2", "AlterPartition", "controller",
            "AlterPartition: the HW advances on commit; KIP-841 refuses shutting-down or dead "
            "replicas (INELIGIBLE_REPLICA); KIP-704 leader recovery after an unclean election."),
    "3.7": ("3.7.x", "HW min-ISR gate", "controller",
            "As 3.3, plus KAFKA-15583: the HW does not move while the ISR is below "
            "min.insync.replicas."),
    "3.9-kraft": ("3.9.0", "KRaft", "controller",
                  "KRaft: a Raft quorum of controllers and a metadata log instead of ZooKeeper; "
                  "brokers heartbeat and are fenced 9 s after the last one; no ELR; unclean "
                  "election honoured by the controller."),
    "4.1": ("4.1.0", "KRaft + ELR", "controller",
            "As 3.9-kraft with Eligible Leader Replicas on by default (KIP-966), pre-vote "
            "(KIP-996) and a periodic fencing check."),
}


def era_notes():
    """{version: {rules_of, short, isr_path, text, api}} for every era of engine.eras.VERSIONS;
    ``api`` is the request's name ("AlterIsr" / "AlterPartition") or None before 2.7."""
    return {v: dict(zip(("rules_of", "short", "isr_path", "text"), NOTES[v]),
                    api=eras.ERAS[v].alter_isr_api if eras.ERAS[v].alter_isr else None)
            for v in eras.VERSIONS}

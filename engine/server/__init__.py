"""The broker, as Kafka's ``kafka.server``, ``kafka.cluster`` and ``kafka.log`` packages hold it:
the broker actor, ReplicaManager's tasks, the partition (leader, follower fetcher, ISR maintenance,
purgatories), the replica log and the AlterIsr / AlterPartition manager.
"""

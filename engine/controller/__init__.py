"""The ZooKeeper-era controller, as Kafka's ``kafka.controller`` package: ``KafkaController``
(``kafka_controller``), its event handlers, the partition state machine, elections, the channel
manager and AlterIsr / AlterPartition handling.
"""

"""Producers and consumers, as Kafka's ``org.apache.kafka.clients``: the Sender, the
NetworkClient's metadata, the consumer's Fetcher and the partitioner.
"""

"""Kafka's own metrics of a run, as an SRE reads them by MBean name (docs/model.md §22).

``catalog`` lists them per era; ``yammer`` and ``sensors`` model the two metric libraries Kafka
uses (Yammer 2.2.0 on the brokers and the ZooKeeper-era controller, Kafka's client metrics in
the producer); ``replica_manager``, ``controller`` and ``clients`` compute each process's values
from the simulation's state; ``sampler`` puts them together over a run. Everything here reads the
simulation and never changes it: no scheduler entry, no random draw, no history entry.
"""

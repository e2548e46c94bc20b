"""Kafka's own unit tests as the referee (docs/kafka-parity.md).

Each test here is written by us after reading one test method of Kafka's own suites at a release
tag; its docstring names the Kafka test class, method and tag, and it asserts the observable
outcome that Kafka's test asserts, on a whole simulated cluster (acks and errors, HW and LEO, ISR,
leader and partition epochs, ELR, fencing, Raft roles and epochs, znodes).
"""

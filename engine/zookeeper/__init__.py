"""ZooKeeper as the ZooKeeper eras use it: the ensemble's znode tree, sessions and watches
(``server``, ``sessions``, ``data``, ``errors``), a broker's client (``zookeeper_client``, Kafka's
``kafka.zookeeper.ZooKeeperClient``) and the call trace checked against a real server (``trace``).
"""

"""KRaft eras (docs/model.md §20): the controller quorum (``raft``), the active controller
(``quorum_controller``, ``broker_control``), partition changes as records (``partition_change``,
``metadata_image``), the broker side (``kraft_broker``, ``metadata_fetcher``), scenario fields
(``kraft_scenario``) and the picture (``kraft_view``).
"""

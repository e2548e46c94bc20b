"""The engine's version: saved runs and seek indexes record it, and stored snapshots are only
reused by the same version (app.replay). A leaf module, so ``result`` can name it without importing
``simulation``.
"""
# 1.1.0: ZooKeeper as a real one answers (docs/model.md §9.10)
# 1.2.0: what a cut held arrives at TCP's next retransmission after the heal, and a request
#        timeout closes its connection (docs/model.md §16, network): re-simulations of runs
#        saved by 1.1.0 that cut and heal links differ
ENGINE_VERSION = "1.2.0"

"""Replaying saved runs and sharing them by link.

* ``seek``: seek indexes of periodic snapshots and exact seeking by re-simulation;
  ``snapshots``: the delta-over-a-pool snapshot format they are stored in.
* ``service``: a server's replay service (indexes in the store, loaded seekers, cursors).
* ``frames``: a replayed moment drawn as live frames; ``compare``: two runs on one time axis.
* ``save``: the facts of a live session or a headless run, saved as a run;
  ``headless``: ``isrlab run`` (a scenario run without the web server).
* ``links``: link codes that carry a scenario (no server state).
"""

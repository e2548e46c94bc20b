"""Counterexample search for any setting: "can this lose data? — show me how" (issue 6).

``finder`` runs the seeded search over fault schedules on Spark executors (or in process);
``service`` shrinks what it finds, saves it as a run and builds the link that opens paused just
before the break, with a narration built from the events' reasons. The engine does the
simulating, checking and shrinking (``engine.tools.search``); this package orchestrates.
"""

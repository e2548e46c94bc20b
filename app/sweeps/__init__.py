"""Bulk sweeps: a grid of scenario settings x seeds x a fault profile, executed on Spark.

``spec``     the sweep document: validation (errors name the field), normalisation, the grid's
             cells, the scenario of each run (fault phase drawn from the run's seed, then a
             healing phase)
``plan``     deterministic run keys (hash of sweep id, cell, seed) and the runs still to do
``worker``   what executors run: the engine on one run, summarised into a compact row, the
             replication events the analysis needs and a latency histogram (standard library
             and the engine only; shipped to executors by value)
``tables``   the tables of sweeps and analysis results (created by the Alembic migration
             ``0002_sweeps_analytics``)
``repo``     repository functions over those tables (plain SQLAlchemy)
``execute``  the Spark job: chunks of runs -> DataFrames -> the store (JDBC), with progress
             and resume
``cli``      ``python -m app sweep SWEEP.json [--db URL] [--master URL]``

Nothing here imports Flask.
"""

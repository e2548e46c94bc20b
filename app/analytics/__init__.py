"""The analysis of stored runs on Spark (PySpark; no Flask).

``session``    the one SparkSession builder (local[*] or --master), code shipping to executors
``jdbc``       the store's URL as a JDBC source and sink (SQLite: xerial, PostgreSQL: pgjdbc)
``schemas``    explicit Spark schemas of every table read or written
``extract``    the facts of sweeps through partitioned JDBC reads
``transforms`` pure DataFrame functions: per-run and per-cell metrics, distributions
``load``       results back into the store (replaced per sweep), optionally Parquet
``job``        extract -> transform -> load
``resim``      re-simulation of stored runs of any source: new questions, what-ifs
``cli``        ``python -m app sweep|analyze|resimulate``
"""

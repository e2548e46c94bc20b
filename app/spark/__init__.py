"""Spark plumbing shared by sweeps, analytics and counterexample search: the one place a
SparkSession is built and code is shipped to executors (``session``), and the store's URL as
Spark's JDBC reader and writer (``jdbc``). Imports nothing else of ISR Lab."""

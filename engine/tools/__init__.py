"""Run-level tools on top of the simulation: the command line, the benchmark, sweep runs and
their worker process, random fault schedules and counterexample search.
"""

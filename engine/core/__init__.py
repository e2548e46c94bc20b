"""The discrete-event core every actor runs on: the scheduler, seeded random streams, messages,
the simulated network and TCP, deadlines and the work budget.
"""

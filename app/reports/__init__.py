"""The analytics report pages (Flask): ``/analytics`` lists sweeps and starts new ones;
``/analytics/<sweep id>`` shows a sweep as heat maps and distributions, shareable by link
(``?metric=...&x=...&y=...&cell=...``). Data comes from the store's sweep and result tables
(``app.sweeps.repo``); Spark jobs run in their own processes (``jobs``), never in the server.
"""
from .routes import bp, init_app

__all__ = ["bp", "init_app"]

"""ISR Lab's web application and everything it stands on (store, sweeps, analytics).

``create_app``, ``runner_of`` and ``socketio_of`` live in ``app.factory`` and are loaded on first
use, so importing a Flask-free part (``app.store``, ``app.sweeps``, ``app.analytics`` in a Spark
worker) does not import Flask.
"""

__all__ = ["create_app", "runner_of", "socketio_of"]


def __getattr__(name):
    if name in __all__:
        from . import factory
        return getattr(factory, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")

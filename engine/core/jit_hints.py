"""PyPy only: which of the engine's functions the JIT compiles on their own instead of inlining.

The kernel's dispatch loop (``CalendarScheduler._dispatch_until``) calls a different handler
almost every time (``fn(arg)``: a delivery, a timer; then a handler per message type and per
kind of node). PyPy inlines whatever a trace calls, so every new handler, node class or branch
seen from the loop became a bridge that inlined the whole handler again: the largest handlers
were traced once per path that led to them (``PYPYLOG=jit-log-opt``: the leader's fetch handling
in 32 traces, the replica comparison in 43). Marked here, each of them is compiled once as a
function of its own and called from the traces that reach it.

Measured (docs/performance.md, tenth round): bench-medium's first run in a fresh PyPy process
about 10% faster, its steady state a little. A hint changes only what the JIT compiles, never what
the code does: runs are the same byte for byte, and CPython never imports ``pypyjit``.
"""
import sys

#: (module, class, method): the handlers a trace from the dispatch loop reaches through a
#: polymorphic call, largest first by the operations they added to traces
_OWN_TRACE = (
    ("engine.invariants", "Invariants", "on_hw"),
    ("engine.server.purgatory", "Purgatory", "_finish_fetch"),
    ("engine.server.fetcher", "ReplicaFollower", "_on_fetch_response"),
    ("engine.clients.sender", "Sender", "_send_ready"),
    ("engine.server.leader", "ReplicaLeader", "on_fetch"),
    ("engine.server.purgatory", "Purgatory", "_complete_fetches"),
    ("engine.clients.producer_consumer", "Producer", "_append"),
    ("engine.clients.consumer_fetcher", "ConsumerFetcher", "_poll_node"),
    ("engine.clients.consumer_fetcher", "ConsumerFetcher", "_on_fetch"),
)

_applied = False


def apply():
    """Give each function of ``_OWN_TRACE`` a trace of its own (once per process; no-op off PyPy)."""
    global _applied
    if _applied or sys.implementation.name != "pypy":
        return
    _applied = True
    try:
        import pypyjit
    except ImportError:   # PyPy built without its JIT
        return
    for code in own_trace_codes():
        # at the function's first instruction: not inlined into callers' traces
        pypyjit.dont_trace_here(0, False, code)


def own_trace_codes():
    """The code objects ``_OWN_TRACE`` names (a renamed handler fails here, on any Python)."""
    codes = []
    for module_name, class_name, name in _OWN_TRACE:
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=[class_name])
        codes.append(getattr(module, class_name).__dict__[name].__code__)
    return codes

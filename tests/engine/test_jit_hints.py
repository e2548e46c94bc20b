"""PyPy's JIT hints (engine/core/jit_hints.py) name handlers by module, class and method; under
CPython they are never applied, so a renamed handler would only break PyPy's engine at import.
These checks run on CPython."""
from engine.core import jit_hints


def test_every_hinted_handler_exists_as_a_plain_method():
    codes = jit_hints.own_trace_codes()
    assert len(codes) == len(jit_hints._OWN_TRACE) == 9     # noqa: SLF001
    assert [c.co_name for c in codes] == [name for _m, _c, name in jit_hints._OWN_TRACE]   # noqa: SLF001


def test_off_pypy_the_hints_change_nothing():
    jit_hints.apply()
    assert jit_hints._applied is False                       # noqa: SLF001

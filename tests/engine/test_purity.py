"""engine/ uses only the standard library, and the simulation itself never reads the wall clock,
spawns threads or draws unseeded randomness (architecture: the engine is a pure function of
scenario, seed and commands)."""
import ast
import pathlib
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[2] / "engine"
#: The command line reports wall time (stats.wall_ms, bench) — outside the simulation itself; so
#: do a sweep run's summary (its CPU time, cpu_ms) and the sweep worker process with its client.
CLI_MODULES = {"cli.py", "bench.py", "__main__.py", "sweep_run.py", "worker.py"}
FORBIDDEN_IN_SIMULATION = {"time", "threading", "datetime", "asyncio", "multiprocessing", "socket",
                           "subprocess", "secrets", "uuid"}
#: PyPy's own built-in modules (its standard library, absent from CPython's list): the JIT hints
#: of engine/core/jit_hints.py, imported only under PyPy
PYPY_BUILTINS = {"pypyjit"}


def imports_of(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0], node.lineno


def engine_files():
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) > 15
    return files


def test_engine_imports_only_the_standard_library():
    offenders = []
    for path in engine_files():
        for module, line in imports_of(path):
            if module not in sys.stdlib_module_names and module not in PYPY_BUILTINS \
                    and module != "engine":
                offenders.append(f"{path.relative_to(ENGINE)}:{line} imports {module}")
    assert offenders == []


def test_simulation_modules_use_no_wall_clock_threads_or_os_randomness():
    offenders = []
    for path in engine_files():
        if path.name in CLI_MODULES:
            continue
        for module, line in imports_of(path):
            if module in FORBIDDEN_IN_SIMULATION:
                offenders.append(f"{path.relative_to(ENGINE)}:{line} imports {module}")
            if module == "random" and path.name != "rng.py":
                offenders.append(f"{path.relative_to(ENGINE)}:{line} imports random outside rng.py")
    assert offenders == []


def test_the_checker_would_catch_a_third_party_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import flask\nfrom time import perf_counter\n")
    assert [m for m, _ in imports_of(bad)] == ["flask", "time"]
    assert "flask" not in sys.stdlib_module_names

"""The project's import graph, read from the source (nothing is imported): module -> the project
modules it imports, at module level or inside functions (a lazy import is still a dependency)."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "app")


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules():
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(importer, is_package, node, alias, modules):
    """The project module an import names: ``from x import y`` is module x.y when that exists."""
    if isinstance(node, ast.Import):
        base = alias.name
    else:
        package = importer if is_package else importer.rpartition(".")[0]
        for _ in range(max(node.level - 1, 0)):
            package = package.rpartition(".")[0]
        base = ".".join(x for x in (package if node.level else "", node.module or "") if x)
        if f"{base}.{alias.name}" in modules:
            return f"{base}.{alias.name}"
    while base and base not in modules:
        base = base.rpartition(".")[0]
    return base or None


def graph():
    modules = project_modules()
    edges = {}
    for name, path in modules.items():
        out = edges.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    target = _resolve(name, path.name == "__init__.py", node, alias, modules)
                    if target and target != name:
                        out.setdefault(target, node.lineno)
    return edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(root):
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found

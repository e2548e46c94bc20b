"""Where the user's error messages are written: every ``ScenarioError`` (and subclass) raised in
``engine/`` and ``app/``, read from the source (``ast``, nothing imported), as msgid templates.

An f-string's values become ``%(name)s`` slots (named after the value's variable), so
``f"{json.dumps(value)[:60]} is not an integer"`` is ``"%(value)s is not an integer"``.
``scripts/error_messages.py`` writes them into ``app/i18n/error_messages.py`` (the msgids the
catalog extracts), and ``tests/i18n/test_error_messages.py`` fails when the code raises a message
that list does not hold.
"""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: the error classes whose (field, message, allowed) a user reads
ERRORS = {"ScenarioError", "StateError", "UserError", "AppError", "ReplayError", "LinkError", "JdbcError",
          "StoreError", "SweepError", "QuestionError", "UnsafeJSON", "Refused", "LaneFull", "ImportRefused"}
SOURCES = ("engine", "app")


def _name_of(node):
    """A slot's name: the variable the value comes from (``json.dumps(value)[:60]`` -> ``value``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Subscript):
            node = node.value if not isinstance(node.value, ast.Name) or not isinstance(node.slice, ast.Constant) \
                else node.slice if isinstance(node.slice.value, str) else node.value
            if isinstance(node, ast.Constant):
                return str(node.value)
        elif isinstance(node, ast.Call):
            node = node.args[0] if node.args else node.func
        elif isinstance(node, (ast.BinOp,)):
            node = node.left
        else:
            return "value"


def template(node):
    """The msgid of a string literal or f-string node, or None (a message built elsewhere)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("%", "%%") if "%(" in node.value else node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    out, seen = [], {}
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(part.value.replace("%", "%%"))
            continue
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in _name_of(part.value)).strip("_") or "value"
        seen[name] = seen.get(name, 0) + 1
        out.append(f"%({name}{seen[name] if seen[name] > 1 else ''})s")
    return "".join(out)


def _args(call):
    """The message and allowed argument nodes of an error constructor call."""
    names = {"message": 1, "allowed": 2}
    found = {k: call.args[i] for k, i in names.items() if len(call.args) > i}
    found.update({kw.arg: kw.value for kw in call.keywords if kw.arg in names})
    return found


def raised_messages(roots=SOURCES):
    """``{template: [file:line, ...]}`` of every literal message and allowed text of the errors."""
    found = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ERRORS):
                    continue
                for arg in _args(node).values():
                    for branch in (arg.body, arg.orelse) if isinstance(arg, ast.IfExp) else (arg,):
                        text = template(branch)
                        if text and _literal(text).strip():
                            found.setdefault(text, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


SLOT = re.compile(r"%\((\w+)\)s")


def _literal(msgid):
    return SLOT.sub("", msgid)


def shape(msgid):
    """A template with its slots' names dropped: two msgids of one shape are one message."""
    return SLOT.sub("%s", msgid)

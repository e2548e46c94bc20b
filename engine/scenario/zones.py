"""Zone faults on the timeline (docs/scenario-format.md §4.3, docs/model.md §21.5): ``crash``,
``restart``, ``shutdown``, ``pause``, ``resume``, ``flush`` and ``isolate`` with ``"rack": name``
act on every node of the rack, in id order, at the same instant.

``check_rack_op`` validates one such operation as the single-node operation of each node in
turn (``engine.scenario.timeline.check_op``, passed in), leaving out the nodes whose state refuses
it; ``rack_targets`` is the list of nodes the simulation applies it to.
"""
import json

from engine.scenario.fields import ScenarioError, StateError, _keys
from engine.scenario.racks import rack_members

#: operations that take ``"rack": name`` in place of ``"broker"``; those of CONTROLLER_RACK_OPS act
#: on the rack's dedicated controllers too (KRaft eras)
RACK_OPS = ("crash", "restart", "shutdown", "pause", "resume", "flush", "isolate")
CONTROLLER_RACK_OPS = ("crash", "restart", "pause", "resume", "isolate")


def rack_targets(scenario, name, rack, field="rack"):
    """[(node id, "broker" | "controller")] an operation ``name`` on ``rack`` acts on, in id order."""
    nodes = rack_members(scenario, rack, field)
    targets = [(n, "broker") for n in nodes if n in scenario["brokers"]]
    dedicated = scenario.get("controllers")
    if name in CONTROLLER_RACK_OPS and isinstance(dedicated, list):
        targets += [(n, "controller") for n in nodes if n in dedicated]
    return sorted(targets)


def check_rack_op(op, field, scenario, allowed, check):
    """A zone fault, normalised: the operation on every node of the rack, in id order. A node
    whose state does not allow it (a broker already stopped, for a crash) is left out; the
    operation is refused only when no node of the rack can take it. ``allowed``: the operation's
    fields; ``check(single_op)`` validates one node's operation and tracks its state."""
    name = op["op"]
    for other in ("broker", "controller"):
        if other in op:
            raise ScenarioError(f"{field}.{other}", f'give "rack" or "{other}", not both',
                                f'"rack": a rack name, or "{other}": an id')
    _keys(op, field, allowed)
    rack = op["rack"]
    targets = rack_targets(scenario, name, rack, f"{field}.rack")
    if not targets:
        raise ScenarioError(f"{field}.rack", f"rack {json.dumps(rack)} has no broker to {name}",
                            "a rack with a broker")
    checked, refused = None, []
    for node, kind in targets:
        single = {k: v for k, v in op.items() if k not in ("rack", "by")}
        single[kind] = node
        try:
            result = check(single)
        except StateError as exc:
            refused.append(exc.message)
            continue
        checked = checked or result
    if checked is None:
        raise ScenarioError(f"{field}.rack", f"cannot {name} rack {rack}: " + "; ".join(refused),
                            "a rack with a node that can take the operation at that point of the timeline")
    out = {"at_ms": op.get("at_ms"), "op": name, "rack": rack}
    out.update({k: v for k, v in checked.items() if k not in ("at_ms", "op", "broker", "controller")})
    if "by" in op:
        if op["by"] != "user":
            raise ScenarioError(f"{field}.by", f"{json.dumps(op['by'])[:40]} is not who did it", '"user"')
        out["by"] = "user"
    return out

"""Timeline operations on a controller of the quorum (docs/scenario-format.md §4.2, docs/model.md
§20.8): crash (process or power: both unclean), restart, shutdown, pause (for_ms), resume, isolate.
"""


def controller_op(sim, op):
    voter = sim.quorum.voters[op["controller"]]
    name = op["op"]
    if name == "crash" or name == "shutdown":
        if not voter.running:
            return f"ignored: controller {voter.node_id} is stopped"
        if name == "shutdown" and sim.rules_1_3:
            voter.begin_shutdown()  # stops (and says so) once a new leader is known, or after 5 s
            return None
        if name == "shutdown":
            voter.shutdown()
        else:
            voter.crash(op.get("mode", "process"))
        sim.emit("controller_stopped", controller=voter.node_id, mode=op.get("mode", name),
                 reason=f"controller {voter.node_id} stops; its metadata log and quorum-state "
                        f"file stay on disk")
        return None
    if name == "restart":
        if voter.running:
            return f"ignored: controller {voter.node_id} is running"
        voter.start()
        return None
    if name == "pause":
        if not voter.running or voter.paused:
            return f"ignored: controller {voter.node_id} is not running"
        voter.pause()
        if op.get("for_ms"):
            sim.scheduler.schedule(op["for_ms"], _resume, (sim, voter.node_id))
        return None
    if name == "resume":
        if not voter.paused:
            return f"ignored: controller {voter.node_id} is not paused"
        voter.resume()
        return None
    target = op.get("from", "all")
    if target == "all":
        others = [n for n in sim.network.nodes if n != voter.node_id]
    elif target == "brokers":
        others = list(sim.broker_ids)
    elif target == "clients":
        others = list(sim.clients)
    else:
        others = [n for n in sim.nodes_of(target) if n != voter.node_id]
    sim.network.isolate(voter.node_id, others)
    return None


def _resume(ctx):
    sim, vid = ctx
    voter = sim.quorum.voters[vid]
    if voter.paused:
        sim.emit("fault", op="resume", controller=vid, reason=f"pause of controller {vid} ends")
        voter.resume()

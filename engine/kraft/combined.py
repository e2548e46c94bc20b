"""Combined mode (``process.roles=broker,controller``, docs/model.md §20.11): one JVM on one host
runs a broker and a Raft voter.

The network knows one node per host, keyed by the broker id: ``CombinedProcess``. Whatever the
network does to that node (a cut, an isolation, a partition, a slow link, connection refused while
the process is down, silence while the machine is off) therefore reaches both roles, as iptables
rules and power failures reach both of Kafka's listeners on one machine. Messages are handed to
the role they are for: requests by their API (see ``_for_controller``),
responses to whichever role awaits that correlation id.

The broker's lifecycle drives the voter's (``KraftBroker`` calls ``start_voter``/``stop_voter``,
pause and resume): the controller starts first and dies with the process
(``KafkaRaftServer.startup`` starts the ControllerServer before the BrokerServer).

The two roles share one KafkaRaftClient (``SharedServer``): the broker's MetadataLoader listens
to the local log instead of fetching it over the network (``read_local_log``). It wakes up when
the local voter's high watermark or leader changes (``QuorumVoter.commit_listener``).
"""
from engine.core.messages import (ALTER_PARTITION, BEGIN_QUORUM_EPOCH, BROKER_HEARTBEAT, BROKER_REGISTRATION,
                        CONNECTION_RESET, END_QUORUM_EPOCH, FETCH, VOTE)

#: the requests only a controller serves (ControllerApis and the Raft APIs besides Fetch)
CONTROLLER_APIS = frozenset((VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, BROKER_REGISTRATION,
                             BROKER_HEARTBEAT, ALTER_PARTITION))

#: The voter numbers its requests from here so that its correlation ids never meet the broker's
#: (one host, one network node: a response is routed by the id it answers).
VOTER_CORRELATION_BASE = 1 << 40


class CombinedProcess:
    """The network node of a combined host: the broker and the voter behind one address."""

    def __init__(self, broker, voter):
        self.node_id = broker.node_id
        self.broker = broker
        self.voter = voter
        # Each role defers its own messages while the JVM is paused (Node.receive): the host
        # itself never holds anything back.
        self.paused = False
        voter._next_corr = VOTER_CORRELATION_BASE

    # One machine, one process: the broker's states are the host's (the voter's move in step).
    @property
    def net_state(self):
        return self.broker.net_state

    @property
    def incarnation(self):
        return self.broker.incarnation

    @property
    def power_cycles(self):
        return self.broker.power_cycles

    def dispatch(self, env):
        voter = self.voter
        if env.type == CONNECTION_RESET:
            voter.receive(env)
            self.broker.receive(env)
        elif env.is_request:
            (voter if self._for_controller(env) else self.broker).receive(env)
        elif env.correlation_id is not None and env.correlation_id in voter.pending:
            voter.receive(env)
        else:
            self.broker.receive(env)

    @staticmethod
    def _for_controller(env):
        """Kafka tells the roles' requests apart by listener (the controller's own port). Their
        APIs are disjoint but for Fetch, which both serve: a replica Fetch names partitions, a
        Raft Fetch an offset in the metadata log."""
        if env.type == FETCH:
            return "partitions" not in env.body
        return env.type in CONTROLLER_APIS


def colocate(sim, broker, voter):
    """Put ``voter`` in ``broker``'s process and give the pair one network node."""
    broker.colocated_voter = voter
    sim.network.add_node(broker.node_id, CombinedProcess(broker, voter))


def start_voter(broker):
    voter = broker.colocated_voter
    if voter is not None and not voter.running:
        voter.start()


def stop_voter(broker, mode):
    """The process is gone (crash, halt or the end of a shutdown): its controller goes with it."""
    voter = broker.colocated_voter
    if voter is None or not voter.running:
        return
    voter.crash(mode)
    broker.sim.emit("controller_stopped", controller=voter.node_id, mode=mode,
                    reason=f"controller {voter.node_id} stops with broker {broker.node_id}'s process "
                           f"(combined mode); its metadata log and quorum-state file stay on disk")


def read_local_log(broker):
    """The broker's metadata fetch in combined mode: the committed records of the local log.
    With nothing new (or no leader known yet) it waits for the voter's next commit or leader
    change (``RaftClient.Listener.handleCommit`` / ``handleLeaderChange``)."""
    voter = broker.colocated_voter
    broker.md_in_flight = True
    known = (voter.leader_id, voter.epoch) == (broker.raft_leader, broker.raft_epoch)
    if not voter.running or voter.leader_id is None or (known and broker.metadata_offset >= voter.hw):
        voter.commit_listener = broker
        return
    body = {"error": None, "leader": voter.leader_id, "epoch": voter.epoch, "hw": voter.hw,
            "records": voter.log[broker.metadata_offset:voter.hw]}
    broker._on_metadata_fetched(voter.node_id, body, None)


def wake_listener(voter):
    """The voter's high watermark or leader moved: the broker in its process reads the log again,
    as its own event (the listener runs on the broker's MetadataLoader thread)."""
    broker, voter.commit_listener = voter.commit_listener, None
    broker.set_timer(0, _wake, broker)


def _wake(broker):
    broker.md_in_flight = False
    broker.fetch_metadata()

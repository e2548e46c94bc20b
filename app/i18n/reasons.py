"""The timeline's reasons and the alarms' details in the reader's language (issue 33).

The engine writes each history event's ``reason`` (and each violation's ``detail``) in English,
with values inside: ``follower 2 not caught up for 30012 ms > replica.lag.time.max.ms 30000 (...)``.
That text is part of saved runs and golden digests, so the engine never changes it; the page
translates it when it shows it. ``PATTERNS`` are msgids of the one catalog whose ``%(name)s`` slots
stand for the values (grouped from the reasons of every library story run in 0.10, 2.6, 3.7,
3.9-kraft and 4.1: ``tests/i18n/test_reasons.py`` measures the coverage). A reason is matched
against them, most specific first (the most literal text); the translation gets the same values
back, so numbers, ids and Kafka's own names (config keys, error codes, ISR, HW, LEO) pass through
unchanged. A slot whose name starts with ``why`` holds a reason of its own (``controller accepted
AlterPartition: <the leader's reason>``) and is translated in turn; the other slots hold a value
with no ``:`` or ``;`` in it (one named ``idlist…`` only ids: ``1, 2, 3``). A reason made of
reasons joined by ``; `` is translated part by part. A reason that matches nothing stays English.

The browser does the same with the table ``browser_table`` gives it (``templates/_i18n_head.html``,
``static/js/i18n_reasons.js``): a room's frames are shared by viewers of either language.
"""
import re


def N_(text):
    """Mark a msgid for extraction without translating it here."""
    return text


#: the engine's reasons and violation details with values in them, as msgids (Kafka's names kept)
PATTERNS = [
    N_("%(why)s: min LEO over the leader, the ISR %(isr)s and caught-up followers is %(hw)s"),
    N_("follower %(broker)s fetched at offset %(offset)s"),
    N_("append at offset %(offset)s"),
    N_("became leader"),
    N_("ISR %(isr)s committed"),
    N_("ISR %(isr)s from the metadata log"),
    N_("ISR now %(isr)s"),
    N_("acks=all: HW %(hw)s did not reach %(end)s within the request timeout %(ms)s ms"),
    N_("HW %(hw)s reached the batch end %(end)s but ISR %(isr)s has %(n)s < min.insync.replicas %(min)s; the data is written and committed anyway"),
    N_("acks=all and ISR %(isr)s has %(n)s < min.insync.replicas %(min)s: rejected before append"),
    N_("%(error)s after %(n)s attempt(s); retries=%(retries)s, delivery.timeout.ms=%(timeout)s"),
    N_("%(error)s after %(n)s attempt(s); retries=%(retries)s"),
    N_("%(producer)s sends %(n)s record(s) to %(topic)s with acks=%(acks)s: %(records)s"),
    N_("auto.offset.reset=%(policy)s: position set to %(offset)s"),
    N_("OffsetsForLeaderEpoch(epoch %(epoch)s) -> end offset %(end)s < position %(position)s: the log was truncated; seek to %(to)s"),
    N_("leader %(leader)s names broker %(broker)s (rack %(rack)s) as the preferred read replica for client.rack %(client_rack)s: fetch from it until %(ms)s ms (metadata.max.age.ms) or an error"),
    N_("preferred read replica %(replica)s forgotten: broker %(broker)s is not in the consumer's metadata; fetch from the leader"),
    N_("preferred read replica %(replica)s forgotten: the fetch to broker %(broker)s failed (%(error)s); fetch from the leader"),
    N_("preferred read replica %(replica)s forgotten: the metadata names leader %(leader)s in epoch %(epoch)s; fetch from the leader"),
    N_("process start: no logs on disk"),
    N_("process start: clean shutdown; HW from replication-offset-checkpoint: %(hws)s"),
    N_("process start: unclean shutdown, logs recovered; HW from replication-offset-checkpoint: %(hws)s"),
    N_("process crash: logs and checkpoints on disk survive (page cache intact); the ZooKeeper session lives until it expires"),
    N_("process crash: logs and checkpoints on disk survive (page cache intact); the controller fences it once its heartbeats have stopped for broker.session.timeout.ms"),
    N_("power failure: whatever was not written back to disk is lost; checkpoint files keep what they last wrote"),
    N_("power failure: offsets %(first)s..%(last)s were never written back from the page cache (flushed up to %(flushed)s)"),
    N_("the process stopped"),
    N_("crash"),
    N_("restart"),
    N_("crash broker %(broker)s (process)"),
    N_("crash broker %(broker)s (power)"),
    N_("crash rack %(rack)s (process): brokers %(brokers)s"),
    N_("crash rack %(rack)s (power): brokers %(brokers)s"),
    N_("restart broker %(broker)s"),
    N_("restart rack %(rack)s: brokers %(brokers)s"),
    N_("shutdown broker %(broker)s"),
    N_("isolate broker %(broker)s"),
    N_("pause broker %(broker)s"),
    N_("pause of broker %(broker)s ends"),
    N_("flush broker %(broker)s"),
    N_("expire_session broker %(broker)s"),
    N_("%(op)s broker %(broker)s"),
    N_("heal every link"),
    N_("pause"),
    N_("shutdown"),
    N_("isolate"),
    N_("pause of controller %(controller)s ends"),
    N_("heal every link of rack %(rack)s"),
    N_("heal %(a)s <-> %(b)s"),
    N_("cut %(a)s -> %(b)s"),
    N_("slow %(a)s -> %(b)s"),
    N_("partition into %(groups)s"),
    N_("ignored: broker %(broker)s is %(state)s"),
    N_("registered /brokers/ids/%(broker)s (broker epoch = czxid %(epoch)s)"),
    N_("re-registered /brokers/ids/%(broker)s in a new ZooKeeper session (broker epoch %(epoch)s)"),
    N_("/brokers/ids/%(broker)s is still held by session %(session)s of the previous process (NodeExistsException); it goes when that session expires after zookeeper.session.timeout.ms %(timeout)s"),
    N_("broker %(broker)s re-registered after an unclean shutdown"),
    N_("no heartbeat for %(ms)s ms >= zookeeper.session.timeout.ms %(timeout)s"),
    N_("nothing heard from ZooKeeper for %(ms)s ms > %(num)s/%(den)s of zookeeper.session.timeout.ms %(timeout)s"),
    N_("ZooKeeper says SESSIONEXPIRED: open a new session, re-register, re-elect"),
    N_("own ZooKeeper session expired"),
    N_("ZooKeeper error %(error)s, skip updating ISR (wanted %(change)s: %(why)s)"),
    N_("Cached zkVersion [%(version)s] not equal to that in zookeeper, skip updating ISR (wanted %(change)s: %(why)s)"),
    N_("ZooKeeper answered again; session %(session)s still valid"),
    N_("broker %(broker)s created the ephemeral /controller and raised /controller_epoch to %(epoch)s"),
    N_("controller %(controller)s re-read /brokers/ids: %(ids)s"),
    N_("controller %(controller)s read %(n)s notification(s), refreshed the ISR of %(partitions)s partition(s) from ZooKeeper and sent UpdateMetadata to every live broker"),
    N_("controller removes broker %(broker)s from the ISR: it is dead; leader epoch +%(n)s"),
    N_("controller removes broker %(broker)s from the ISR: it is dead (the last ISR member is kept); leader epoch +%(n)s"),
    N_("controller removes broker %(broker)s from the ISR: it is shutting down; leader epoch +%(n)s"),
    N_("new partition: leader = first live replica of AR %(ar)s, ISR = live replicas, leader epoch %(epoch)s"),
    N_("leader %(old)s is not alive: %(new)s is the first replica in AR order %(ar)s that is alive and in ISR %(isr)s"),
    N_("broker %(broker)s is shutting down: %(new)s is the first replica in AR %(ar)s alive, in ISR %(isr)s and not shutting down"),
    N_("no live replica in ISR %(isr)s; unclean.leader.election.enable=true: %(new)s is the first live replica in AR %(ar)s; ISR = %(new_isr)s and whatever it never fetched is gone"),
    N_("no replica of AR %(ar)s is both alive and in ISR %(isr)s, and unclean.leader.election.enable=%(unclean)s"),
    N_("preferred replica %(preferred)s (first in AR %(ar)s) is alive and in ISR %(isr)s: move leadership back from %(leader)s"),
    N_("wrote /admin/preferred_replica_election for %(n)s partition(s)"),
    N_("leader imbalance above leader.imbalance.per.broker.percentage %(pct)s%%"),
    N_("automatic preferred leader balancing (leader.imbalance.check.interval.seconds)"),
    N_("controlled shutdown of broker %(broker)s"),
    N_("%(why)s; logs flushed, HW checkpointed, ZooKeeper session closed"),
    N_("controlled shutdown succeeded after %(n)s attempt(s)"),
    N_("controlled shutdown failed %(n)s times (%(cause)s); proceeding to unclean shutdown of the process"),
    N_("controlled.shutdown.enable=false"),
    N_("%(request)s from controller %(controller)s epoch %(epoch)s < known controller epoch %(known)s: STALE_CONTROLLER_EPOCH"),
    N_("follower %(broker)s not caught up for %(ms)s ms > replica.lag.time.max.ms %(lag)s (follower LEO %(follower_leo)s, leader LEO %(leader_leo)s)"),
    N_("follower %(broker)s LEO %(leo)s >= leader HW %(hw)s"),
    N_("follower %(broker)s LEO %(leo)s >= leader HW %(hw)s and >= leader epoch start offset %(start)s (KAFKA-%(jira)s)"),
    N_("%(ms)s ms since the last ISR change > blackout %(blackout)s ms"),
    N_("%(ms)s ms since the last propagation > %(max)s ms"),
    N_("expand of %(partition)s proposed by leader %(leader)s"),
    N_("expand of %(partition)s proposed by leader %(leader)s: accepted"),
    N_("expand of %(partition)s proposed by leader %(leader)s: %(error)s"),
    N_("shrink of %(partition)s proposed by leader %(leader)s"),
    N_("shrink of %(partition)s proposed by leader %(leader)s: accepted"),
    N_("shrink of %(partition)s proposed by leader %(leader)s: %(error)s"),
    N_("controller accepted AlterPartition: %(why)s"),
    N_("controller accepted AlterIsr: %(why)s"),
    N_("AlterPartition from leader %(leader)s: ISR %(old)s -> %(new)s"),
    N_("AlterIsr from leader %(leader)s: ISR %(old)s -> %(new)s"),
    N_("LeaderAndIsr from controller %(controller)s: follow %(leader)s in epoch %(epoch)s"),
    N_("LeaderAndIsr from controller %(controller)s: follow %(leader)s in epoch %(epoch)s; reconcile the log with OffsetsForLeaderEpoch first"),
    N_("LeaderAndIsr from controller %(controller)s: leader in epoch %(epoch)s; HW starts at the local %(hw)s and waits for every ISR member to fetch once"),
    N_("PartitionChangeRecord from the metadata log: follow %(leader)s in epoch %(epoch)s"),
    N_("PartitionChangeRecord from the metadata log: follow %(leader)s in epoch %(epoch)s; reconcile the log with OffsetsForLeaderEpoch first"),
    N_("PartitionChangeRecord from the metadata log: leader in epoch %(epoch)s; HW starts at the local %(hw)s and waits for every ISR member to fetch once"),
    N_("PartitionChangeRecord from the metadata log: no live leader in epoch %(epoch)s (leader %(leader)s); a follower with no fetcher until a leader is elected"),
    N_("LeaderAndIsr names leader %(leader)s, which is not alive in this broker's metadata cache: partition left as it was"),
    N_("becoming follower of %(leader)s in epoch %(epoch)s: truncate to the local high watermark %(hw)s (pre-KIP-%(kip)s)"),
    N_("follower of %(leader)s in epoch %(epoch)s: OffsetsForLeaderEpoch(epoch %(asked)s) -> (epoch %(answered)s, end offset %(end)s); truncate to %(to)s"),
    N_("OFFSET_OUT_OF_RANGE: leader %(leader)s's LEO %(leo)s < our LEO %(ours)s: truncate to the leader's LEO"),
    N_("heartbeat from broker %(broker)s: it has applied its RegisterBrokerRecord (offset %(offset)s) and wants to be unfenced"),
    N_("RegisterBrokerRecord at offset %(offset)s: broker epoch %(epoch)s, fenced until it has caught up"),
    N_("registered with controller %(controller)s: broker epoch %(epoch)s (the offset of its RegisterBrokerRecord); fenced until it has applied that record"),
    N_("broker %(broker)s registers a new incarnation while the previous one still has a valid session (it expires broker.session.timeout.ms after its last heartbeat)"),
    N_("no heartbeat from broker %(broker)s since %(t)s ms: broker.session.timeout.ms %(timeout)s expired"),
    N_("no heartbeat from broker %(broker)s since %(t)s ms: broker.session.timeout.ms %(timeout)s expired (broker epoch %(epoch)s is already fenced: %(version)s writes the fence record again)"),
    N_("broker %(broker)s fenced"),
    N_("broker %(broker)s unfenced"),
    N_("%(why)s: clean election of %(leader)s (PartitionChangeBuilder, assignment order)"),
    N_("%(why)s: unclean election of %(leader)s (PartitionChangeBuilder, assignment order)"),
    N_("%(why)s: elr election of %(leader)s (PartitionChangeBuilder, assignment order)"),
    N_("%(why)s: last_known_leader election of %(leader)s (PartitionChangeBuilder, assignment order)"),
    N_("%(why)s: preferred election of %(leader)s (PartitionChangeBuilder, assignment order)"),
    N_("controlled shutdown of broker %(broker)s: fenced as it stops"),
    N_("controlled shutdown of broker %(broker)s granted"),
    N_("broker %(broker)s begins a controlled shutdown: its next heartbeat says WantShutDown"),
    N_("heartbeat from broker %(broker)s with WantShutDown: its leaderships move away"),
    N_("broker %(broker)s asked to shut down and leads nothing"),
    N_("broker %(broker)s leads nothing and every active broker has applied offset %(offset)s: SHUTDOWN_NOW"),
    N_("the controller granted the controlled shutdown; logs flushed, HW checkpointed, broker epoch %(epoch)s written to the clean-shutdown file"),
    N_("the metadata log changed the ISR to %(isr)s in partition epoch %(epoch)s (same leader epoch)"),
    N_("leader %(leader)s was removed with its broker: leader %(new)s, ISR %(isr)s; a leader is elected only by the next election"),
    N_("leader %(leader)s was removed with its broker: leader %(new)s, the ISR keeps its last member %(isr)s"),
    N_("leader %(leader)s was removed with its broker: leader %(new)s, the ISR is emptied (<= %(n)s with unclean election enabled)"),
    N_("controller %(controller)s starts %(state)s in epoch %(epoch)s with %(n)s metadata records on disk"),
    N_("controller %(controller)s votes for itself in epoch %(epoch)s and asks the other voters"),
    N_("controller %(controller)s asks for pre-votes for epoch %(epoch)s"),
    N_("controller %(controller)s won epoch %(epoch)s with the votes of %(votes)s (a majority of %(n)s voters)"),
    N_("controller %(controller)s committed its LeaderChange record of epoch %(epoch)s: it replays the log and becomes the active controller; every registered broker gets a fresh session"),
    N_("epoch %(epoch)s had no winner (votes of %(votes)s, refused by %(refused)s, no answer from %(silent)s): %(why)s"),
    N_("no Fetch answered by leader %(leader)s for controller.quorum.fetch.timeout.ms %(ms)s"),
    N_("controller %(controller)s stops; its metadata log and quorum-state file stay on disk"),
    N_("controller %(controller)s stops with broker %(broker)s's process (combined mode); its metadata log and quorum-state file stay on disk"),
    N_("controller %(controller)s ends its graceful shutdown (timed out after %(ms)s ms); its metadata log and quorum-state file stay on disk"),
    N_("controller %(controller)s ends its graceful shutdown (knows the new leader %(leader)s); its metadata log and quorum-state file stay on disk"),
    N_("controller %(controller)s had voted for itself in epoch %(epoch)s before it stopped: it asks the other voters again"),
    N_("check-quorum: fewer than a majority of voters fetched within 1.5 x controller.quorum.fetch.timeout.ms = %(ms)s ms"),
    N_("leader %(leader)s resigned (EndQuorumEpoch): preferred successor #%(n)s, election after %(ms)s ms"),
    N_("leader %(leader)s resigned (EndQuorumEpoch): no preferred successors named (it restarted resigned), election after %(ms)s ms"),
    N_("controller %(controller)s was leader of epoch %(epoch)s before it stopped: it starts resigned; EndQuorumEpoch to the other voters, preferred successors %(successors)s (by fetched offset)"),
    N_("%(n)s record(s) acknowledged with acks=all are not in the leader's log (e.g. %(record)s acked at offset %(offset)s at %(t)s ms; the leader has nothing there, LEO %(leo)s)"),
    N_("%(record)s (acks=all, offset %(offset)s) is on no replica at the end of the run"),
    N_("%(n)s record(s) acknowledged with acks=all are not in the leader's log (e.g. %(record)s acked at offset %(offset)s at %(t)s ms; the leader has nothing there, LEO %(leo)s); broker %(broker)s became leader in epoch %(epoch)s"),
    N_("%(n)s record(s) read by consumers are gone from the leader's log (e.g. %(consumer)s read %(record)s at offset %(offset)s)"),
    N_("offset %(offset)s holds %(a)s (epoch %(epoch_a)s) on broker %(broker_a)s but %(b)s (epoch %(epoch_b)s) on broker %(broker_b)s, below both HWs (%(hws)s)"),
    # what the engine writes for a user's commands from the page (set_config, create_topic, a zone
    # fault on a rack...): tests/i18n/test_reasons.py runs every operation in five eras
    N_("set_config"), N_("create_topic"), N_("consume"), N_("stop_client"), N_("produce"), N_("resume"), N_("flush"),
    N_("ignored: consumer %(consumer)s is already running"),
    N_("ignored: no client %(client)s"),
    N_("ignored: broker %(broker)s is not paused"),
    N_("ignored: broker %(broker)s has no live ZooKeeper session"),
    N_("ignored: a preferred replica election is already in progress"),
    N_("ignored: controller %(controller)s is %(state)s"),
    N_("ignored: controller %(controller)s is not running"),
    N_("ignored: controller %(controller)s is not paused"),
    N_("no active controller: the topic is created once there is one"),
    N_("expired on request (expire_session)"),
    N_("expired after %(ms)s ms without being acknowledged (request.timeout.ms %(timeout)s)"),
    N_("expired after %(ms)s ms without being acknowledged"),
    # a zone fault: "<op> rack <rack>: <its nodes>", the nodes as "broker 1", "brokers 1, 2, controller 3001"
    N_("crash rack %(rack)s (process): %(why_nodes)s"),
    N_("crash rack %(rack)s (power): %(why_nodes)s"),
    N_("restart rack %(rack)s: %(why_nodes)s"),
    N_("shutdown rack %(rack)s: %(why_nodes)s"),
    N_("pause rack %(rack)s: %(why_nodes)s"),
    N_("resume rack %(rack)s: %(why_nodes)s"),
    N_("flush rack %(rack)s: %(why_nodes)s"),
    N_("isolate rack %(rack)s: %(why_nodes)s"),
    N_("broker %(idlist)s"), N_("brokers %(idlist)s"), N_("controller %(idlist)s"), N_("controllers %(idlist)s"),
    N_("%(why_brokers)s, controller %(idlist)s"), N_("%(why_brokers)s, controllers %(idlist)s"),
    N_("no broker"),
]

SLOT = re.compile(r"%\((\w+)\)s|%%")
SPECIAL = re.compile(r"[.*+?^${}()|[\]\\/]")


def _escape(text):
    """``text`` as a literal in a regular expression that Python and JavaScript read alike."""
    return SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _regex(msgid):
    """``msgid`` as a regular expression: ``%(name)s`` a named group, ``%%`` a literal ``%``."""
    out, at = [], 0
    for found in SLOT.finditer(msgid):
        out.append(_escape(msgid[at:found.start()]))
        name = found.group(1)
        out.append("%" if name is None else f"(?P<{name}>.+?)" if name.startswith("why")
                   else f"(?P<{name}>-?\\d+(?:, -?\\d+)*)" if name.startswith("idlist") else f"(?P<{name}>[^:;]+?)")
        at = found.end()
    out.append(_escape(msgid[at:]))
    return "".join(out)


def _literal_length(msgid):
    return len(SLOT.sub("", msgid))


#: the patterns in the order they are tried: the most literal text first, so a specific pattern
#: wins over a general one that would also match (``… : accepted`` before ``… : %(error)s``)
ORDERED = sorted(PATTERNS, key=_literal_length, reverse=True)


def compile_patterns(msgids):
    """``msgids`` as the list ``translate_with`` tries, the most literal first (other tables of
    server-written text, e.g. ``app/i18n/narration.py``, reuse the same matching)."""
    return [(re.compile(_regex(m), re.S), m) for m in sorted(msgids, key=_literal_length, reverse=True)]


_COMPILED = compile_patterns(PATTERNS)


def translate(text, gettext):
    """``(text in the catalog's language, whether all of it was translated)``; ``gettext`` looks a
    msgid up (Flask-Babel's, or a catalog's). A reason that matches no pattern comes back as it is."""
    return translate_with(_COMPILED, text, gettext)


def translate_with(compiled, text, gettext):
    """``translate`` over the table ``compiled`` (``compile_patterns``); a ``why`` slot is
    translated with the same table."""
    if not isinstance(text, str) or not text:
        return text, False
    for regex, msgid in compiled:
        found = regex.fullmatch(text)
        if not found:
            continue
        values, complete = {}, True
        for name, value in found.groupdict().items():
            if name.startswith("why"):
                value, done = translate_with(compiled, value, gettext)
                complete = complete and done
            values[name] = value
        return gettext(msgid) % values, complete
    if "; " in text:
        parts = [translate_with(compiled, part, gettext) for part in text.split("; ")]
        if all(done for _, done in parts):
            return "；".join(part for part, _ in parts), True
    return text, False


def browser_table(gettext):
    """``[[regex source, msgstr], ...]`` in the order they are tried, for the page's JavaScript
    (the same regular expressions: Python's ``(?P<name>`` is written ``(?<name>`` there)."""
    return [[_regex(m).replace("(?P<", "(?<"), gettext(m)] for m in ORDERED]

"""ZooKeeper's errors, by kazoo's class names and ZooKeeper's codes, and its watch event types
(kazoo.protocol.states.EventType). Brokers see the codes in responses (``ERRORS`` maps them back).
"""


class ZookeeperError(Exception):
    code = "SYSTEMERROR"


class NoNodeError(ZookeeperError):
    code = "NONODE"


class NodeExistsError(ZookeeperError):
    code = "NODEEXISTS"


class BadVersionError(ZookeeperError):
    code = "BADVERSION"


class NotEmptyError(ZookeeperError):
    code = "NOTEMPTY"


class NoChildrenForEphemeralsError(ZookeeperError):
    code = "NOCHILDRENFOREPHEMERALS"


class SessionExpiredError(ZookeeperError):
    code = "SESSIONEXPIRED"


class RolledBackError(ZookeeperError):
    code = "ROLLEDBACK"


class BadArgumentsError(ZookeeperError):
    code = "BADARGUMENTS"


ERRORS = {cls.code: cls for cls in (NoNodeError, NodeExistsError, BadVersionError, NotEmptyError,
                                     NoChildrenForEphemeralsError, SessionExpiredError,
                                     RolledBackError, BadArgumentsError)}

# kazoo.protocol.states.EventType values
CREATED, DELETED, CHANGED, CHILD = "CREATED", "DELETED", "CHANGED", "CHILD"

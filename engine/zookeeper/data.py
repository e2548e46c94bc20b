"""The znode data model's helpers: kazoo's ZnodeStat view of a znode, path arithmetic and the
stat dicts sent over the simulated network. (``Znode`` itself stays in ``engine.zookeeper.server``.)
"""
from engine.zookeeper.errors import BadArgumentsError


class ZnodeStat:
    """The subset of ZooKeeper's Stat that Kafka reads (kazoo's ZnodeStat field names)."""
    __slots__ = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion",
                 "ephemeralOwner", "numChildren")

    def __init__(self, node):
        self.czxid = node.czxid
        self.mzxid = node.mzxid
        self.ctime = node.ctime_ms
        self.mtime = node.mtime_ms
        self.version = node.version
        self.cversion = node.cversion
        self.ephemeralOwner = node.ephemeral_owner or 0
        self.numChildren = len(node.children)

    @property
    def owner_session_id(self):
        return self.ephemeralOwner or None

    def __repr__(self):
        return (f"ZnodeStat(version={self.version}, cversion={self.cversion}, "
                f"czxid={self.czxid}, ephemeralOwner={self.ephemeralOwner})")


def parent_of(path):
    head, _, _name = path.rpartition("/")
    return head or "/"


def name_of(path):
    return path.rpartition("/")[2]


def _check_path(path):
    if not isinstance(path, str) or not path.startswith("/") or (path != "/" and path.endswith("/")) \
            or "//" in path:
        raise BadArgumentsError(f"invalid path {path!r}")


def _stat_view(stat):
    return {"version": stat.version, "cversion": stat.cversion, "czxid": stat.czxid,
            "ephemeral_owner": stat.ephemeralOwner or None}


def _stat_dict(node):
    return {"version": node.version, "cversion": node.cversion, "czxid": node.czxid,
            "ephemeral_owner": node.ephemeral_owner}

"""The room workers' wire format: each message is a 4-byte big-endian length and a pickle
(protocol 4: CPython 3.11 and PyPy 3.9 both read it). Both ends are this program, so pickle is
trusted input here, as for the engine's snapshots.

web -> worker: ``("call", id, method, args)`` · ``("backlog", {sid: queued})`` · ``("stop",)``
worker -> web: ``("reply", id, kind, value)`` (kind "ok", "user": the user error's fields, or
"error": a traceback) · ``("tick", [(room, text, sids, everyone)], {room: status})`` ·
``("snapshot", room, run, commands, t_ms, blob)`` · ``("removed", [room])`` · ``("stats", {...})``
"""
import pickle
import struct

PROTOCOL = 4
_LENGTH = struct.Struct(">I")
MAX_MESSAGE = 512 * 2 ** 20     # a message larger than this is a broken stream, not data


class ProtocolError(RuntimeError):
    """The other end closed the stream or wrote something that is not a message."""


def encode(message):
    body = pickle.dumps(message, protocol=PROTOCOL)
    return _LENGTH.pack(len(body)) + body


def write(stream, message):
    """Write one message and flush (the caller serialises writers)."""
    stream.write(encode(message))
    stream.flush()


def read(stream):
    """The next message; ProtocolError at the end of the stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise ProtocolError("end of stream")
    (size,) = _LENGTH.unpack(head)
    if size > MAX_MESSAGE:
        raise ProtocolError(f"a message of {size} bytes")
    body = stream.read(size)
    if len(body) < size:
        raise ProtocolError("end of stream inside a message")
    return pickle.loads(body)


def user_error_fields(exc):
    """A user error as plain data: it crosses the pipe and is raised again on the other side."""
    return (exc.field, exc.message, exc.allowed, getattr(exc, "status", 400), getattr(exc, "retry_after", None))


def raise_user_error(fields):
    from ..runner.errors import AppError
    field, message, allowed, status, retry_after = fields
    error = AppError(field, message, allowed, status=status)
    if retry_after is not None:
        error.with_retry_after(retry_after)
    raise error

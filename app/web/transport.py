"""How the runner's frames reach browsers: Socket.IO rooms, one serialised payload per group.

``backlog(sid)`` looks at the Engine.IO socket's outgoing queue: a frame still waiting there
means the connection is slower than the frame rate, so the runner skips that viewer this time
(python-engineio 4.x, threading mode: one queue and one writer thread per socket).
"""

NAMESPACE = "/"


def channel(room_id):
    return "room:" + room_id


class SocketIOTransport:
    def __init__(self, socketio):
        self.socketio = socketio

    def send(self, room_id, text, sids, everyone):
        sio = self.socketio
        if len(sids) == len(everyone):
            sio.emit("frame", text, to=channel(room_id), namespace=NAMESPACE)
        elif len(sids) * 2 >= len(everyone):
            chosen = set(sids)
            sio.emit("frame", text, to=channel(room_id), namespace=NAMESPACE,
                     skip_sid=[s for s in everyone if s not in chosen])
        else:
            for sid in sids:
                sio.emit("frame", text, to=sid, namespace=NAMESPACE)

    def backlog(self, sid):
        try:
            server = self.socketio.server
            eio_sid = server.manager.eio_sid_from_sid(sid, NAMESPACE)
            sock = server.eio.sockets.get(eio_sid) if eio_sid else None
            return sock.queue.qsize() if sock is not None else 0
        except Exception:  # noqa: BLE001 - a transport without queues never lags
            return 0

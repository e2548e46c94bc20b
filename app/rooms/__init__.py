"""Live rooms in room worker processes (docs/architecture.md, "Room workers").

Under ``isrlab serve`` (one per core; ``ISRLAB_ROOM_WORKERS``, docs/deploy.md), every live simulation
runs in one of a few worker processes: each runs the same ``app.runner.Runner`` loop it would run
in the web process, and sends its frames back over a pipe. The web process keeps no simulation:
``RemoteRunner`` (remote.py) has the ``Runner``'s public surface, places rooms on the least loaded
worker, forwards calls and relays frames to Socket.IO. A worker that dies takes nothing but a
moment: its rooms come back in another worker from their latest snapshot and the commands since
(recovery.py).

* protocol.py — the framed messages both ends speak (length-prefixed pickles);
* worker.py   — the worker process (``python -m app.rooms.worker``), Flask-free;
* process.py  — the web side of one worker: start, call, read, notice its death;
* recovery.py — per-room snapshots kept in the web process, and replaying them;
* pipe_writer.py — the thread that writes to a worker: no caller waits on its pipe;
* remote.py   — ``RemoteRunner`` and its room handles; viewers.py — its joins and leaves;
  failover.py — a dead worker's rooms moved.

With ``ISRLAB_MESSAGE_QUEUE`` (several web processes): host.py (``isrlab rooms``), mq.py (requests
over Redis), redis_runner.py (the web process's side), socketio_queue.py (frames over Redis).
"""

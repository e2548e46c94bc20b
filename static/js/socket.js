// The one socket: connects, rejoins after reconnects, turns requests into promises of replies.
/* global io */

export function connectSocket({ onFrame, onConnect, onDisconnect }) {
  const socket = io({ transports: ["websocket", "polling"], reconnectionDelayMax: 4000 });
  socket.on("connect", () => onConnect && onConnect());
  socket.on("disconnect", reason => onDisconnect && onDisconnect(reason));
  socket.on("connect_error", err => onDisconnect && onDisconnect(err && err.message));
  socket.on("frame", text => onFrame(text));

  /** emit and wait for the server's reply: {ok: true, ...} or {ok: false, error: {field, message, allowed}} */
  async function request(event, payload = {}, timeoutMs = 8000) {
    if (!socket.connected) return { ok: false, error: { message: "not connected to the server" } };
    try {
      const reply = await socket.timeout(timeoutMs).emitWithAck(event, payload);
      return reply || { ok: false, error: { message: "empty reply" } };
    } catch (e) {
      return { ok: false, error: { message: "the server did not answer in time" } };
    }
  }
  return { socket, request };
}

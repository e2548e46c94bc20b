// Colours with a meaning: leader epochs, message kinds, timeline categories.

const EPOCHS = ["#4fb3ff", "#b58cff", "#ffb547", "#3fd0a0", "#ff7aa8", "#a3d65c", "#ff8c5a", "#7d8bff",
                "#4fd8e0", "#e0a0ff"];

export function epochColor(epoch) {
  if (epoch === null || epoch === undefined || epoch < 0) return "#5d6b80";
  return EPOCHS[epoch % EPOCHS.length];
}

export const MESSAGE_KINDS = [
  { kind: "fetch", label: "Fetch", color: "#4fb3ff" },
  { kind: "produce", label: "Produce", color: "#3fd0a0" },
  { kind: "control", label: "LeaderAndIsr / UpdateMetadata", color: "#d98cff" },
  { kind: "alterisr", label: "AlterIsr / AlterPartition (leader → controller)", color: "#f0e442" },
  { kind: "zk", label: "ZooKeeper", color: "#ffb547" },
  { kind: "epoch", label: "OffsetsForLeaderEpoch", color: "#ff8c5a" },
  { kind: "other", label: "Metadata / other", color: "#8b99ad" },
];
const KIND_COLOR = Object.fromEntries(MESSAGE_KINDS.map(k => [k.kind, k.color]));

export function messageKind(type) {
  const base = type.endsWith("Response") ? type.slice(0, -8) : type;
  if (base.startsWith("Zk")) return "zk";
  if (base === "Fetch") return "fetch";
  if (base === "Produce") return "produce";
  if (base === "LeaderAndIsr" || base === "UpdateMetadata" || base === "StopReplica" || base === "ControlledShutdown") return "control";
  if (base === "OffsetsForLeaderEpoch") return "epoch";
  if (base === "AlterIsr") return "alterisr";          // KIP-497, "AlterPartition" from 3.2
  return "other";
}

export function messageColor(type) { return KIND_COLOR[messageKind(type)]; }

/** The request's name as Kafka calls it in this era (the wire type is "AlterIsr" throughout). */
export function messageName(type, meta) {
  const api = meta && meta.alter_isr_api;
  return api && type.startsWith("AlterIsr") ? api + type.slice(8) : type;
}

export const DROP_COLOR = "#ff5d6c";

// Colours with a meaning: leader epochs, message kinds, timeline categories.
import { t } from "./i18n.js";

const EPOCHS = ["#4fb3ff", "#b58cff", "#ffb547", "#3fd0a0", "#ff7aa8", "#a3d65c", "#ff8c5a", "#7d8bff",
                "#4fd8e0", "#e0a0ff"];

export function epochColor(epoch) {
  if (epoch === null || epoch === undefined || epoch < 0) return "#5d6b80";
  return EPOCHS[epoch % EPOCHS.length];
}

// `mode`: a kind only ZooKeeper ("zk") or KRaft ("kraft") eras send; the legend shows the era's own
export const MESSAGE_KINDS = [
  { kind: "fetch", label: "Fetch", color: "#4fb3ff" },
  { kind: "produce", label: "Produce", color: "#3fd0a0" },
  { kind: "control", label: "LeaderAndIsr / UpdateMetadata", color: "#d98cff", mode: "zk" },
  { kind: "alterisr", label: t("AlterIsr / AlterPartition (leader → controller)"), color: "#f0e442" },
  { kind: "zk", label: "ZooKeeper", color: "#ffb547", mode: "zk" },
  { kind: "raft", label: t("Raft: Vote · BeginQuorumEpoch · metadata Fetch"), color: "#d98cff", mode: "kraft" },
  { kind: "heartbeat", label: "BrokerRegistration / BrokerHeartbeat", color: "#ffb547", mode: "kraft" },
  { kind: "epoch", label: "OffsetsForLeaderEpoch", color: "#ff8c5a" },
  { kind: "other", label: t("Metadata / other"), color: "#8b99ad" },
];
const KIND_COLOR = Object.fromEntries(MESSAGE_KINDS.map(k => [k.kind, k.color]));

/** `quorumHop`: the message goes to or from a controller voter (KRaft), so a Fetch is a fetch of
 *  the metadata log, part of the Raft traffic, not a replica's fetch. */
export function messageKind(type, quorumHop = false) {
  const base = type.endsWith("Response") ? type.slice(0, -8) : type;
  if (base.startsWith("Zk")) return "zk";
  if (base === "Vote" || base === "BeginQuorumEpoch" || base === "EndQuorumEpoch" || (base === "Fetch" && quorumHop)) return "raft";
  if (base === "BrokerRegistration" || base === "BrokerHeartbeat") return "heartbeat";
  if (base === "Fetch") return "fetch";
  if (base === "Produce") return "produce";
  if (base === "LeaderAndIsr" || base === "UpdateMetadata" || base === "StopReplica" || base === "ControlledShutdown") return "control";
  if (base === "OffsetsForLeaderEpoch") return "epoch";
  if (base === "AlterIsr" || base === "AlterPartition") return "alterisr";   // KIP-497, "AlterPartition" from 3.2
  return "other";
}

export function messageColor(type, quorumHop = false) { return KIND_COLOR[messageKind(type, quorumHop)]; }

/** The request's name as Kafka calls it in this era (the wire type is "AlterIsr" throughout). */
export function messageName(type, meta) {
  const api = meta && meta.alter_isr_api;
  return api && type.startsWith("AlterIsr") ? api + type.slice(8) : type;   // "AlterPartition" passes as it is
}

export const DROP_COLOR = "#ff5d6c";

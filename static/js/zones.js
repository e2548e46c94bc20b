// Racks and availability zones, read from the frame (docs/model.md §21): which nodes stand in which
// zone, what state a zone is in, and which partitions keep two or more replicas in one zone (a
// zone failure takes those replicas at once). Pure functions of the state; no DOM.
import { dedicatedVoters } from "./kraft.js";
import { t } from "./i18n.js";

/** The run's racks: {node id: rack name} (an empty object when the scenario has none). */
export function racksOf(store) {
  return (store && store.meta && store.meta.racks) || {};
}

/** Whether the run places its nodes in racks (the map groups them by zone then). */
export function hasZones(store) {
  return Object.keys(racksOf(store)).length > 0;
}

/** The rack of a node, or null. */
export function rackOf(store, id) {
  const rack = racksOf(store)[String(id)];
  return rack === undefined ? null : rack;
}

/** The zones the map draws, in order: [{rack, brokers: [ids], voters: [ids]}], racks by name
 *  (Kafka sorts racks by name too, model.md §21.2), then one group for the nodes in no rack (rack
 *  null) when there are any. `brokerIds` in id order; dedicated voters come from the quorum. */
export function zoneGroups(store, brokerIds) {
  if (!hasZones(store)) return [];
  const voters = dedicatedVoters(store);
  const byRack = new Map();
  const group = rack => {
    if (!byRack.has(rack)) byRack.set(rack, { rack, brokers: [], voters: [] });
    return byRack.get(rack);
  };
  for (const id of brokerIds) group(rackOf(store, id)).brokers.push(id);
  for (const id of voters) group(rackOf(store, id)).voters.push(id);
  const named = [...byRack.keys()].filter(r => r !== null).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [...named, ...(byRack.has(null) ? [null] : [])].map(r => byRack.get(r));
}

/** One zone's nodes as the frame has them: {rack, brokers: [broker views], voters: [voter views],
 *  others: [ids of the brokers outside it]}. */
export function zoneOf(store, rack) {
  const all = [...store.brokers.values()];
  const brokers = all.filter(b => rackOf(store, b.id) === rack).sort((a, b) => a.id - b.id);
  const ids = new Set(dedicatedVoters(store).filter(id => rackOf(store, id) === rack));
  const voters = store.quorum ? store.quorum.voters.filter(v => ids.has(v.id)) : [];
  return { rack, brokers, voters, others: all.filter(b => rackOf(store, b.id) !== rack).map(b => b.id) };
}

const DOWN = ["stopped", "halted", "registration_failed"];

/** How a zone is doing, in a few words (in the page's language): "all up", "2 of 2 down", "cut off", ... A node is cut
 *  off when no link joins it to any broker outside its zone (what isolating the zone does); a
 *  single cut link is the broker's own story, told on its card. `others`: the ids of the brokers
 *  outside the zone. */
export function zoneState(zone, links, others = []) {
  const nodes = [...zone.brokers, ...zone.voters];
  const down = nodes.filter(n => DOWN.includes(n.state)).length;
  const paused = nodes.filter(n => n.state === "paused").length;
  const blocked = new Set(((links && links.blocked) || []).map(([a, b]) => `${a}>${b}`));
  const severed = id => others.length > 0 && others.every(o => blocked.has(`${id}>${o}`) || blocked.has(`${o}>${id}`));
  const cut = nodes.filter(n => !DOWN.includes(n.state) && severed(n.id)).length;
  const parts = [];
  if (down) parts.push(down === nodes.length ? t("down") : t("{down} of {n} down", { down, n: nodes.length }));
  if (paused) parts.push(t("{n} paused", { n: paused }));
  if (cut) parts.push(cut === nodes.length - down ? t("cut off") : t("{n} cut off", { n: cut }));
  return { text: parts.length ? parts.join(" · ") : t("all up"), down, paused, cut, size: nodes.length };
}

/** Links with an end at node `id` that are cut or slowed (the frame's `links`). */
export function cutLinks(id, links) {
  const out = [];
  for (const [a, b] of [...((links && links.blocked) || []), ...((links && links.slow) || [])]) {
    if (a === id || b === id) out.push([a, b]);
  }
  return out;
}

/** {rack: [replicas]} for each rack holding two or more of partition `p`'s replicas: the frame's
 *  own `same_rack` (engine/view.py), else the meta's list (app/runner/live_view.py). */
export function sameRack(store, p) {
  if (p.same_rack) return p.same_rack;
  const out = {};
  for (const e of (store.meta && store.meta.same_rack_partitions) || []) {
    if (e.topic === p.topic && e.partition === p.partition) out[e.rack] = e.replicas;
  }
  return out;
}

/** A chip's words in capitals (a state at a glance), the rack's name as written: `text` holds
 *  "\u0000" where the rack goes. */
function shout(text, rack) {
  return text.toUpperCase().replace("\u0000", rack);
}

/** What a crowded zone means for this partition, in a learner's words: [{rack, short, long}]. */
export function sameRackWarnings(store, p, minIsr) {
  const rf = p.replicas.length;
  return Object.entries(sameRack(store, p)).map(([rack, replicas]) => {
    const left = rf - replicas.length;
    const few = left === 1 ? t("1 replica would be left, fewer than min.insync.replicas={min}: acks=all writes stop (NOT_ENOUGH_REPLICAS) until the zone is back", { min: minIsr })
      : t("{n} replicas would be left, fewer than min.insync.replicas={min}: acks=all writes stop (NOT_ENOUGH_REPLICAS) until the zone is back", { n: left, min: minIsr });
    const effect = left === 0 ? t("every copy of it is gone with that zone: the partition goes offline")
      : left < minIsr ? few : t("{n} replicas would be left, still min.insync.replicas={min} or more", { n: left, min: minIsr });
    return { rack, replicas, short: shout(t("{n} replicas in {rack}", { n: replicas.length, rack: "\u0000" }), rack),
      long: t("Replicas {ids} of {key} are all in zone {rack}. If {rack} fails, the partition loses {n} of its {rf} replicas at once: "
        + "{effect}. Placing each replica in another zone (broker.rack and Kafka's rack-aware assignment) avoids it.",
      { ids: replicas.join(", "), key: p.key, rack, n: replicas.length, rf, effect }) };
  });
}

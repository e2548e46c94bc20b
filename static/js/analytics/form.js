// The "start a sweep" form: fields for the base cluster, the grid's axes, the seeds and the fault
// profile, from which the sweep document (app/sweeps/spec.py) is built; the raw JSON stays as an
// "Advanced" tab. Values typed into an axis are typed by the axis's kind (from the server), so
// "0.10" stays an era and "2" becomes the integer 2 for min.insync.replicas.
import { t } from "../i18n.js";

export const EXAMPLE = {
  name: "min ISR and truncation era",
  grid: { kafka_version: ["0.10", "2.6"], acks: ["1", "all"], "min.insync.replicas": [1, 2] },
  base: {
    brokers: 3, duration_ms: 60000,
    topics: [{ name: "t", partitions: 3, replication_factor: 3 }],
    clients: [{ name: "p1", type: "producer", topic: "t", rate_per_s: 100 }],
  },
  seeds: 25,
  faults: "default",
};

export class FormError extends Error {
  constructor(field, message) { super(`${field}: ${message}`); this.field = field; this.detail = message; }
}

// one typed value from the text of an axis's values, or FormError
export function typedValue(kind, raw, field) {
  const v = raw.trim();
  if (kind === "int") {
    if (!/^-?\d+$/.test(v)) throw new FormError(field, t("\"{v}\" is not an integer", { v }));
    return Number(v);
  }
  if (kind === "bool") {
    if (v !== "true" && v !== "false") throw new FormError(field, t("\"{v}\" is not true or false", { v }));
    return v === "true";
  }
  if (Array.isArray(kind) && !kind.includes(v)) throw new FormError(field, t("\"{v}\" is not one of {allowed}", { v, allowed: kind.join(", ") }));
  return v;
}

function int(raw, field, lo) {
  const v = String(raw).trim();
  if (!/^\d+$/.test(v) || Number(v) < lo) throw new FormError(field, t("\"{v}\" is not an integer from {lo}", { v, lo }));
  return Number(v);
}

// The sweep document from the fields' values (plain data, so it can be tested without a page):
// {name, brokers, partitions, rf, rate, duration_s, axes: [[name, "v1, v2"]], seeds, first_seed, faults}
export function buildDocument(f, kinds) {
  const grid = {};
  for (const [axis, text] of f.axes) {
    if (!axis) continue;
    const field = `grid.${axis}`;
    if (axis in grid) throw new FormError(field, t("is given twice"));
    const parts = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
    if (!parts.length) throw new FormError(field, t("has no values"));
    grid[axis] = parts.map((p, i) => typedValue(kinds[axis] ?? "text", p, `${field}[${i}]`));
  }
  const count = int(f.seeds, "seeds", 1);
  const first = f.first_seed === "" || f.first_seed === undefined ? 0 : int(f.first_seed, "seeds.first", 0);
  return {
    name: f.name.trim() || "sweep",
    grid,
    base: {
      brokers: int(f.brokers, "base.brokers", 1),
      duration_ms: Math.round(1000 * Number(f.duration_s)),
      topics: [{ name: "t", partitions: int(f.partitions, "base.partitions", 1),
        replication_factor: int(f.rf, "base.replication_factor", 1) }],
      clients: [{ name: "p1", type: "producer", topic: "t", rate_per_s: int(f.rate, "base.rate_per_s", 0) }],
    },
    seeds: first ? { first, count } : count,
    faults: f.faults,
  };
}

// The fields' values from a document, when the form can show it (null when it cannot: another
// base, several topics or clients, a fault profile of its own... then the JSON tab is the way)
export function fieldsOf(doc) {
  const b = doc.base;
  const topic = b?.topics?.[0], c = b?.clients?.[0];
  if (!b || typeof b !== "object" || b.topics?.length !== 1 || b.clients?.length !== 1 || c.type !== "producer") return null;
  if (typeof doc.faults === "object" || doc.fault_profiles || doc.fault_phase || doc.id) return null;
  const seeds = typeof doc.seeds === "object" ? doc.seeds : { first: 0, count: doc.seeds ?? 10 };
  return {
    name: doc.name ?? "", brokers: b.brokers ?? 3, partitions: topic.partitions ?? 1, rf: topic.replication_factor ?? 1,
    rate: c.rate_per_s ?? 100, duration_s: (b.duration_ms ?? 60000) / 1000,
    axes: Object.entries(doc.grid || {}).map(([k, vals]) => [k, vals.map((v) => String(v)).join(", ")]),
    seeds: seeds.count, first_seed: seeds.first ?? 0, faults: doc.faults ?? "default",
  };
}

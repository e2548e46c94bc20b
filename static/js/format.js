// Formatting numbers and times the way the screen shows them.
import { t } from "./i18n.js";

export function seconds(ms) {
  if (ms === null || ms === undefined) return "–";
  return (ms / 1000).toFixed(3) + " s";
}

export function shortSeconds(ms) {
  if (ms === null || ms === undefined) return "–";
  const s = ms / 1000;
  if (Math.abs(s) >= 100) return s.toFixed(0) + " s";
  if (Math.abs(s) >= 10) return s.toFixed(1) + " s";
  return s.toFixed(2) + " s";
}

export function speed(v) {
  if (v === "max") return t("max");
  if (v >= 10) return v.toFixed(0) + "×";
  if (v >= 1) return v.toFixed(1).replace(/\.0$/, "") + "×";
  return v.toFixed(2).replace(/0$/, "") + "×";
}

export function hex(n) { return n === null || n === undefined ? "–" : "0x" + Number(n).toString(16); }

export function list(a) { return Array.isArray(a) ? a.join(",") : ""; }

export function json(v) {
  if (v === null || v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

export function errorText(err) {
  if (!err) return t("unknown error");
  let s = (err.field ? err.field + ": " : "") + (err.message || t("error"));
  if (err.allowed) s += t(" (allowed: {allowed})", { allowed: err.allowed });
  return s;
}

// Kafka's "no limit" values. A JSON number above 2^53 arrives rounded (Long.MAX_VALUE reads as
// 9223372036854776000), so anything that close to the top is printed the way Kafka prints it.
const LONG_MAX = "9223372036854775807";
const INT_MAX = 2147483647;

/** A config value as Kafka prints it: Long.MAX_VALUE and Integer.MAX_VALUE exactly, named. */
export function kafkaNumber(v) {
  if (v === LONG_MAX || (typeof v === "number" && v >= 9.2233720368547e18)) return `${LONG_MAX} (Long.MAX_VALUE)`;
  if (v === INT_MAX || v === String(INT_MAX)) return `${INT_MAX} (Integer.MAX_VALUE)`;
  return v === null || v === undefined ? t("unset") : String(v);
}

/** The digits alone, for an input field (no name attached). */
export function kafkaDigits(v) {
  if (v === LONG_MAX || (typeof v === "number" && v >= 9.2233720368547e18)) return LONG_MAX;
  return v === null || v === undefined ? "" : String(v);
}

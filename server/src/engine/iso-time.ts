/**
 * ISO 8601 text of a time in ms, remembering the last one: a RIGOR step stamps ~30 events, records and
 * audit entries, most of them within the same millisecond, and each `toISOString` allocates a Date and a
 * string. Same result as `new Date(ms).toISOString()` (a RangeError for an invalid time included).
 */
let lastMs = Number.NaN;
let lastIso = '';

export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

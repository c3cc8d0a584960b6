/**
 * The benches' stand-in for a skill's own work: `ms` of the clock spent on the CPU (the main thread
 * stays busy, as a skill's or a LangGraph node's work keeps it). Imports nothing, so
 * bench/engine-cpu.ts, which loads other checkouts by path, can use it too.
 */
export function spin(ms: number): void {
  const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  while (process.hrtime.bigint() < end) {
    // the work itself
  }
}

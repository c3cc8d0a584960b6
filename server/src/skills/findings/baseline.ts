/**
 * Baseline: a JSON file of fingerprints accepted at some point; a scan against it reports only
 * findings whose fingerprint is not in it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Finding } from './finding';
import { parseJsonQuietly } from '../workspace/files';

export interface Baseline {
  version: 1;
  createdAt: string;
  fingerprints: string[];
}

export function createBaseline(findings: readonly Finding[], now = new Date()): Baseline {
  return { version: 1, createdAt: now.toISOString(), fingerprints: [...new Set(findings.map((f) => f.fingerprint))].sort() };
}

export function parseBaseline(json: string): Baseline {
  const raw: unknown = parseJsonQuietly(json, 'baseline');
  if (!raw || typeof raw !== 'object') throw new Error('baseline: not an object');
  const r = raw as Record<string, unknown>;
  if (r.version !== 1) throw new Error(`baseline: unsupported version ${String(r.version)}`);
  if (!Array.isArray(r.fingerprints) || !r.fingerprints.every((x) => typeof x === 'string')) {
    throw new Error('baseline: fingerprints must be an array of strings');
  }
  return { version: 1, createdAt: typeof r.createdAt === 'string' ? r.createdAt : '', fingerprints: r.fingerprints as string[] };
}

export function readBaseline(file: string): Baseline {
  return parseBaseline(readFileSync(file, 'utf8'));
}

export function writeBaseline(file: string, baseline: Baseline): void {
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** Findings not present in the baseline. */
export function filterNew<T extends Pick<Finding, 'fingerprint'>>(findings: readonly T[], baseline: Baseline | readonly string[]): T[] {
  const known = new Set(Array.isArray(baseline) ? baseline : (baseline as Baseline).fingerprints);
  return findings.filter((f) => !known.has(f.fingerprint));
}

/**
 * A skill module's listing written at build time next to the module (`skills.js` →
 * `skills.manifest.json`), so the server need not start a worker that loads the whole module just
 * to learn which skills it has (about a third of the server's start). The manifest names the
 * module's SHA-256; a module that does not match (rebuilt, edited, replaced) is listed by a worker
 * as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Skill } from '../engine/rigor/skill';
import type { SkillListing } from './protocol';

export interface SkillManifest {
  module: string;
  sha256: string;
  skills: SkillListing[];
}

/** What a worker reports about the skills of its modules (a later module replaces an earlier skill). */
export function listSkills(skills: readonly Skill[]): SkillListing[] {
  const byKey = new Map<string, Skill>();
  for (const s of skills) byKey.set(`${s.agentId}/${s.action}`, s);
  return [...byKey.values()].map((s) => ({
    agentId: s.agentId, action: s.action, optimize: typeof s.optimize === 'function', outputSchema: !!s.outputSchema,
    ...(s.requiresModel ? { requiresModel: true } : {}),
    ...(s.needs?.length ? { needs: [...s.needs] } : {}),
    ...jsonSchemaOf('inputJsonSchema', s.inputSchema, 'input'),
    ...jsonSchemaOf('outputJsonSchema', s.outputSchema, 'output'),
  }));
}

/** A zod schema as JSON Schema (for the OpenAPI document); nothing for a schema of another library. */
function jsonSchemaOf<K extends string>(key: K, schema: unknown, io: 'input' | 'output'): Partial<Record<K, Record<string, unknown>>> {
  if (!schema || typeof schema !== 'object' || !('_zod' in schema)) return {};
  try {
    const json = z.toJSONSchema(schema as z.ZodType, { io, unrepresentable: 'any' }) as Record<string, unknown>;
    delete json['$schema'];
    return { [key]: json } as Partial<Record<K, Record<string, unknown>>>;
  } catch {
    return {};
  }
}

export function manifestPathOf(modulePath: string): string {
  return modulePath.replace(/\.[cm]?js$/, '') + '.manifest.json';
}

export function moduleSha256(modulePath: string): string {
  return createHash('sha256').update(readFileSync(modulePath)).digest('hex');
}

/** The build-time listing of one module, or null when there is none or it is not this module's. */
export function readSkillManifest(modulePath: string): SkillListing[] | null {
  const file = manifestPathOf(modulePath);
  if (!existsSync(file)) return null;
  try {
    const m = JSON.parse(readFileSync(file, 'utf8')) as Partial<SkillManifest>;
    if (!Array.isArray(m.skills) || typeof m.sha256 !== 'string' || m.sha256 !== moduleSha256(modulePath)) return null;
    return m.skills;
  } catch {
    return null;
  }
}

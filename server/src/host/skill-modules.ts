/**
 * Skill modules: CommonJS files that export `skills` (an array of Skill objects), loaded with
 * `--skill-module <file>` or `CADRE_SKILL_MODULES` (paths separated by the platform's delimiter).
 * They plug extra or replacement skills into the engine through the one Skill interface.
 */
import * as path from 'node:path';
import type { Skill } from '../engine/rigor/skill';

function isSkill(v: unknown): v is Skill {
  const s = v as Partial<Skill>;
  return !!s && typeof s.agentId === 'string' && typeof s.action === 'string' && typeof s.research === 'function' && typeof s.propose === 'function' && typeof s.generate === 'function';
}

export function loadSkillModules(files: string[]): Skill[] {
  const out: Skill[] = [];
  for (const file of files) {
    const abs = path.resolve(file);
    let mod: { skills?: unknown; default?: { skills?: unknown } };
    try {
      // A runtime path: esbuild keeps this require as it is.
      mod = require(abs) as typeof mod;
    } catch (err) {
      throw new Error(`skill module ${abs} could not be loaded: ${(err as Error).message}`);
    }
    const list = mod.skills ?? mod.default?.skills;
    if (!Array.isArray(list)) throw new Error(`skill module ${abs} does not export a "skills" array`);
    list.forEach((s, i) => {
      if (!isSkill(s)) throw new Error(`skill module ${abs}: skills[${i}] is not a skill (needs agentId, action, research, propose, generate)`);
      out.push(s);
    });
  }
  return out;
}

export function skillModulesFromEnv(env: NodeJS.ProcessEnv): string[] {
  return (env['CADRE_SKILL_MODULES'] ?? '').split(path.delimiter).map((p) => p.trim()).filter(Boolean);
}

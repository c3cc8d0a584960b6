/**
 * Child process of the side-effect crash tests:
 *   node --import tsx effects-child.ts <dataDir> start-refactor <repo>
 *   node --import tsx effects-child.ts <dataDir> start-task <callbackUrl>
 *   node --import tsx effects-child.ts <dataDir> resume
 * The engine runs on a real store in <dataDir>, coder-ai's real refactor skill (real git) and the real
 * HTTP callback notifier. `start-*` prints `accepted <id>` once the execution is on disk; `resume`
 * resumes what is in flight, waits until every execution is finished and its callback has an outcome,
 * prints `settled <id> <status>` lines and exits 0.
 *
 * KILL_AT (+ KILL_KEY, a substring of the ledger key) SIGKILLs this process and its git children at a
 * ledger boundary:
 *   intent   - the intent is on disk, the effect has not started;
 *   effect   - the effect has happened (branch made / callback answered 200), the outcome is not recorded;
 *   outcome  - the outcome is on disk.
 * (The parent kills it from outside, mid-effect, once git lists the temporary worktree.) The parent
 * spawns this process detached (its own process group), as a crash takes git children too.
 */
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../../../server/src/config/load';
import { createEngine } from '../../../server/src/engine/index';
import type { SideEffectRecord } from '../../../server/src/engine/executions/records';
import type { CollectionStore, Identified, Repository } from '../../../server/src/engine/ports';
import { httpCallbackNotifier } from '../../../server/src/integrations/callback-notifier';
import { codingSkills } from '../../../server/src/skills/coding';
import { releaseWorktrees, sweepWorktrees } from '../../../server/src/skills/coding/git';
import { withCodeSyntax } from '../../../server/src/skills/coding/syntax';
import { reviewChecks } from '../../../server/src/skills/review-checks';
import { openStore, storeFilePath } from '../../../server/src/store';
import { JsonlEventLog } from '../../../server/src/store/jsonl-event-log';
import { fleetSkills } from '../../support/engine-harness';

/** The owner's key: callbacks are signed with its SHA-256 hex, which the test verifies. */
export const CHILD_KEY_ID = 'key_crashtest';
export const CHILD_KEY_HASH = 'a'.repeat(64);

const KILL_AT = process.env['KILL_AT'] ?? '';
const KILL_KEY = process.env['KILL_KEY'] ?? '';

function die(): never {
  // The whole group: git children die with the server, as in a crash of the machine or container.
  try { process.kill(-process.pid, 'SIGKILL'); } catch { /* not a group leader */ }
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

/** The ledger collection with the kill switches at its boundaries. */
function withKills(store: CollectionStore): CollectionStore {
  return {
    ...(store.tier ? { tier: store.tier.bind(store) } : {}),
    collection<T extends Identified>(name: string): Repository<T> {
      const inner = store.collection<T>(name);
      if (name !== 'sideEffects' || !KILL_AT) return inner;
      return new Proxy(inner, {
        get(target, prop, receiver) {
          if (prop !== 'put') {
            const v = Reflect.get(target, prop, receiver) as unknown;
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
          }
          return async (rec: T) => {
            const r = rec as unknown as SideEffectRecord;
            const match = r.key.includes(KILL_KEY);
            const done = r.state !== 'intent';
            if (match && done && KILL_AT === 'effect') die();
            await target.put(rec);
            if (match && !done && KILL_AT === 'intent') die();
            if (match && done && KILL_AT === 'outcome') die();
          };
        },
      });
    },
  };
}

async function main(): Promise<void> {
  const [dataDir, mode, arg] = process.argv.slice(2);
  if (!dataDir || !mode) throw new Error('usage: effects-child.ts <dataDir> start-refactor <repo> | start-task <url> | resume');
  const store = await openStore({ file: storeFilePath(dataDir) });
  const audit = await openAuditTrail({ dir: path.join(dataDir, 'audit') });
  const eventLog = await JsonlEventLog.open(path.join(dataDir, 'events'));
  const config = parseConfig('defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n', path.join(dataDir, '.cadre.yaml'), {});
  const engine = createEngine({
    store: withKills(store), audit, eventLog, config, checks: withCodeSyntax(reviewChecks),
    skills: [...fleetSkills.filter((s) => s.agentId !== 'coder-ai' || !codingSkills.some((c) => c.action === s.action)), ...codingSkills],
    notifier: httpCallbackNotifier,
    effectResources: { release: releaseWorktrees, sweep: sweepWorktrees },
    callbackSecret: (keyId) => (keyId === CHILD_KEY_ID ? CHILD_KEY_HASH : null),
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  // The secret is not handed over at accept time: the signature must come from the lookup, as after a restart.
  const owner = { keyId: CHILD_KEY_ID, callbackSecret: null };
  if (mode === 'start-refactor') {
    const rec = await engine.executions.runAction('coder-ai', 'refactor', { prompt: 'read hard-coded secrets from the environment', source: arg! }, owner);
    process.stdout.write(`accepted ${rec.id}\n`);
  } else if (mode === 'start-task') {
    const rec = await engine.executions.submitTask({ task: 'add a health endpoint', capabilities: ['BUILD'], callbackUrl: arg! }, owner);
    process.stdout.write(`accepted ${rec.id}\n`);
  } else if (mode === 'resume') {
    await engine.executions.resumeInFlight();
  } else throw new Error(`unknown mode ${mode}`);
  // Until every execution is finished and every callback has an outcome (or the kill comes).
  const ledger = store.collection<SideEffectRecord>('sideEffects');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const all = engine.executions.list();
    const open = all.filter((r) => !['completed', 'failed', 'cancelled'].includes(r.status) || engine.executions.isRunning(r.id)
      || (r.request.callbackUrl && ledger.get(`${r.id}:-1:callback`)?.state !== 'done'));
    if (open.length === 0) {
      for (const r of all) process.stdout.write(`settled ${r.id} ${r.status}\n`);
      break;
    }
    if (Date.now() > deadline) throw new Error(`still open: ${open.map((r) => `${r.id} ${r.status}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await engine.executions.close();
  await eventLog.flush();
  await store.close();
  await audit.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`effects-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

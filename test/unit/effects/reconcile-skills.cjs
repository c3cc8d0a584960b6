/**
 * Skill module for the worker reconcile test (agent `fx-ai`, action `push`): Generate performs a side
 * effect through ctx.once('push', effect, { reconcile, resources }). The effect and the reconcile run in
 * the worker and say which thread ran them; input.found is what the reconcile finds in the "world".
 */
'use strict';

const { threadId } = require('node:worker_threads');

let effects = 0;
let reconciles = 0;

module.exports.skills = [{
  agentId: 'fx-ai',
  action: 'push',
  async research() {
    return { items: [{ source: 'test', detail: 'x', weight: 1 }], constraints: [], pathsRead: [] };
  },
  propose() {
    return [];
  },
  async generate(ctx) {
    const out = await ctx.once('push', async () => ({ by: 'effect', thread: threadId, n: ++effects }), {
      reconcile: async () => {
        reconciles++;
        return ctx.request.input.found ? { by: 'reconcile', thread: threadId, found: ctx.request.input.found } : undefined;
      },
      resources: [{ kind: 'worktree', repo: '/repo', path: '/tmp/cadre-wt-fixture' }],
    });
    return { kind: 'report', summary: 'pushed', goalRef: ctx.request.goal.id, confidence: 0.9, data: { out, effects, reconciles } };
  },
}];

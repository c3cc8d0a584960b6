/**
 * Multi-root workspaces (issue 17): each folder's own `.cadre.yaml` applies to the executions on that
 * folder, over the built server (dist/server.js --stdio) with two folders whose files differ:
 *
 * - alpha (the first folder, the engine's own configuration): intelligence core, the defaults otherwise;
 * - beta: intelligence ultra, its own policy-ai rule, review-ai in OBSERVE, and a policy.disable and
 *   observe.urls that a repository may not set (ignored, logged).
 *
 * security-ai scan runs its ultra checks on beta only; policy-ai uses beta's rule on beta only; review-ai acts
 * under OBSERVE on beta and under its own mode on alpha; the Executions rows name each execution's
 * folder; a folder whose file is invalid runs nothing and the error names the file, line and key;
 * an edit of a folder's file applies to the next execution without a restart.
 */
import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClientRequests } from '../../../protocol/lsp-messages';
import { KEY } from '../../support/fleet-server';
import { fixtureProject } from '../../support/fixture-project';
import { ensureBuilt } from '../../support/server-process';
import { folderRef, startLsp, until, type Json, type LspSession } from './lsp-session';

const TEAM_RULE = `policy:
  rules:
    - id: team-label
      severity: medium
      kinds: [Deployment]
      path: metadata.labels.team
      op: exists
      message: every workload names its owning team
  disable: [k8s.image-digest]
`;
const ALPHA = 'defaults:\n  intelligence: core\n';
const BETA = `defaults:\n  intelligence: ultra\nagents:\n  review-ai:\n    acmf_mode: OBSERVE\nobserve:\n  urls: ["http://10.0.0.1/"]\n${TEAM_RULE}`;

interface Report { violations: Array<{ rule: string; file: string }>; rules: Array<{ id: string; state: string }> }

describe('language server: each folder of a multi-root workspace has its own .cadre.yaml', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  let lsp: LspSession | undefined;
  let alpha = '';
  let beta = '';

  const folder = (name: string, config: string) => {
    return fixtureProject({ prefix: `cadre-it-folders-${name}-`, copy: { deploy: 'policy/compliant' }, files: { '.cadre.yaml': config, 'src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b;\n}\n' } }, dirs);
  };
  /** Runs an agent action on a folder from the editor and waits for its end (the REST status view). */
  const run = async (agentId: string, action: string, dir: string, input: Json = {}): Promise<Json> => {
    const { executionId } = await lsp!.conn.sendRequest(ClientRequests.invokeAgent, { agentId, action, input, folder: pathToFileURL(dir).href });
    return until(`${agentId} ${action} to end`, async () => {
      const r = await lsp!.rest('GET', `/api/v1/rigor/status/${executionId}`);
      return ['completed', 'failed', 'cancelled'].includes(String(r.json['status'])) ? { ...r.json, executionId } : null;
    }, 90_000);
  };
  const refusal = (p: Promise<unknown>) => p.then(() => null, (e: { code: number; message: string; data?: { code?: string } }) => e);

  before(async () => {
    ensureBuilt();
    alpha = folder('alpha', ALPHA);
    beta = folder('beta', BETA);
    lsp = await startLsp({ folders: [alpha, beta], key: KEY });
  });
  after(async () => {
    await lsp?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("security-ai scan runs alpha's core checks and beta's ultra checks; policy-ai applies beta's own rule on beta only; a repository's disable and URLs are ignored", async () => {
    // The code check is ULTRA's: skipped on alpha (core), run on beta (ultra).
    const codeCheck = (r: Json) => ((r['output'] as { checks: Array<{ id: string; status: string; reason?: string }> }).checks).find((c) => c.id === 'code');
    const scanAlpha = await run('security-ai', 'scan', alpha);
    const scanBeta = await run('security-ai', 'scan', beta);
    assert.equal(scanAlpha['status'], 'completed', JSON.stringify(scanAlpha).slice(0, 800));
    assert.equal(scanBeta['status'], 'completed', JSON.stringify(scanBeta).slice(0, 800));
    assert.equal(codeCheck(scanBeta)?.status, 'ran', JSON.stringify(codeCheck(scanBeta)));
    assert.equal(codeCheck(scanAlpha)?.status, 'skipped', JSON.stringify(codeCheck(scanAlpha)));
    assert.match(String(codeCheck(scanAlpha)?.reason), /requires the ULTRA intelligence tier/);

    const teamLabels = (r: Json) => (r['output'] as Report).violations.filter((v) => v.rule === 'team-label').map((v) => v.file);
    const done = await run('policy-ai', 'check', beta);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    assert.ok(teamLabels(done).some((f) => f.startsWith('deploy/')), `beta's rule applies on beta: ${JSON.stringify((done['output'] as Report).violations.map((v) => v.rule))}`);
    assert.equal((done['output'] as Report).rules.find((r) => r.id === 'k8s.image-digest')?.state, 'on', "beta's policy.disable is ignored");
    const first = await run('policy-ai', 'check', alpha);
    assert.equal(first['status'], 'completed', JSON.stringify(first).slice(0, 1500));
    assert.deepEqual(teamLabels(first), [], "beta's rule does not apply on alpha");
    assert.ok(lsp!.logs.some((l) => l.includes(`${path.join(beta, '.cadre.yaml')} applies to the executions on ${beta}`)), lsp!.logs.join('\n'));
    assert.ok(lsp!.logs.some((l) => /policy\.disable in .*beta.*\.cadre\.yaml ignored/.test(l)));
    assert.ok(lsp!.logs.some((l) => /observe\.urls in .*beta.*\.cadre\.yaml ignored/.test(l)));
  });

  it("review-ai acts under beta's OBSERVE on beta and under its own mode on alpha; the Executions rows name each folder", async () => {
    const onBeta = await run('review-ai', 'review', beta, { files: ['src/math.ts'] });
    const onAlpha = await run('review-ai', 'review', alpha, { files: ['src/math.ts'] });
    assert.equal(onBeta['acmfMode'], 'OBSERVE', JSON.stringify(onBeta).slice(0, 800));
    assert.equal(onAlpha['acmfMode'], 'LEARNING', JSON.stringify(onAlpha).slice(0, 800));
    const rows = await lsp!.conn.sendRequest(ClientRequests.executions, { limit: 10 });
    const folderOf = (id: unknown) => rows.find((r) => r.id === id)?.folder;
    assert.deepEqual(folderOf(onBeta['executionId']), { name: path.basename(beta), path: beta });
    assert.deepEqual(folderOf(onAlpha['executionId']), { name: path.basename(alpha), path: alpha });
  });

  it('an edit of a folder file applies to its next execution, without a restart', async () => {
    const pid = lsp!.child.pid;
    writeFileSync(path.join(beta, '.cadre.yaml'), `defaults:\n  intelligence: ultra\n${TEAM_RULE}`);
    const after = await run('review-ai', 'review', beta, { files: ['src/math.ts'] });
    assert.equal(after['acmfMode'], 'LEARNING', 'review-ai is no longer capped on beta');
    assert.equal(lsp!.child.pid, pid);
  });

  it('a folder whose .cadre.yaml is invalid runs nothing: the error names the file, the line and the key', async () => {
    const gamma = folder('gamma', 'defaults:\n  intelligence: mega\n');
    await lsp!.conn.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: [folderRef(gamma)], removed: [] } });
    await until('gamma served', async () => (await lsp!.conn.sendRequest(ClientRequests.folders, {})).folders.some((f) => f.path === gamma));
    const refused = await refusal(lsp!.conn.sendRequest(ClientRequests.invokeAgent, { agentId: 'review-ai', action: 'review', input: {}, folder: pathToFileURL(gamma).href }));
    assert.equal(refused?.data?.code, 'ERR_CONFIG_INVALID', JSON.stringify(refused));
    assert.match(refused!.message, new RegExp(`${path.join(gamma, '.cadre.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2:\\d+: defaults\\.intelligence: `));
  });
});

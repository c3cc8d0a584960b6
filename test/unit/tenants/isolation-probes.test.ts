import { strict as assert } from 'node:assert';
import { ISOLATION_PROBES, judgeProbe, type OwnedObjects } from '../../../server/src/http/isolation/probes';
import { isolationReport } from '../../../server/src/skills/tenant/check-isolation';

const owned: OwnedObjects = {
  tenant: 'tnt_owner', workspace: '/tmp/ws', task: 'task_1', workflow: 'wf_1', rigor: 'exec_1', action: 'act_1', custom: 'wf_2', approval: 'apr_1',
  project: 'proj_1', prediction: 'pred_1', remediation: 'rem_1', webhook: 'wh_1', delivery: 'dlv_1', integration: 'int_1', keyId: 'key_1', secret: 'cadre/integrations/tnt_owner/github',
};

describe("isolation probes: how an answer to another tenant's key is judged", () => {
  const get = ISOLATION_PROBES['GET /v1/webhooks/{webhook_id}']!;
  const list = ISOLATION_PROBES['GET /v1/projects']!;
  const install = ISOLATION_PROBES['GET /v1/admin/store']!;

  it('a 404 that echoes only the id the request named is isolated', () => {
    const r = get.req(owned);
    assert.equal(judgeProbe(get, r, { status: 404, text: '{"instance":"/v1/webhooks/wh_1"}' }, owned).verdict, 'isolated');
  });
  it("a 200 for the owner's object is a leak", () => {
    const j = judgeProbe(get, get.req(owned), { status: 200, text: '{"id":"wh_1"}' }, owned);
    assert.equal(j.verdict, 'leak');
    assert.match(j.why, /expected 404, got 200/);
  });
  it("a list naming an owner's id is a leak whatever the status", () => {
    const j = judgeProbe(list, list.req(owned), { status: 200, text: '{"projects":[{"id":"proj_1"}]}' }, owned);
    assert.equal(j.verdict, 'leak');
    assert.match(j.why, /proj_1/);
  });
  it('an install route must refuse with install_only, not merely 403', () => {
    assert.equal(judgeProbe(install, install.req(owned), { status: 403, text: '{"reason":"install_only"}' }, owned).verdict, 'isolated');
    assert.equal(judgeProbe(install, install.req(owned), { status: 403, text: '{"reason":"role"}' }, owned).verdict, 'leak');
    assert.equal(judgeProbe(install, install.req(owned), { status: 200, text: '{}' }, owned).verdict, 'leak');
  });
  it('no write probe can change anything outside the probe tenants: install routes carry bodies they refuse, tenant routes name the owner', () => {
    for (const [id, p] of Object.entries(ISOLATION_PROBES)) {
      const r = p.req(owned);
      assert.ok(!r.path.includes('tnt_default'), `${id} names the default tenant`);
      assert.ok(!JSON.stringify(r.body ?? null).includes('cadre/integrations/local'), `${id} names the install's secret`);
    }
    assert.deepEqual(ISOLATION_PROBES['POST /v1/agents/{id}/acmf']!.req(owned).body, { mode: 'NOT_A_MODE', reason: 'isolation probe' });
  });
  it('the report: a leak or a changed object is a breach; an inconclusive or unprobed route leaves it incomplete', () => {
    const row = (verdict: 'isolated' | 'leak' | 'inconclusive') => ({ route: 'GET /x', expect: '404', method: 'GET', path: '/x', status: 404, ownerStatus: 200, verdict, why: '' });
    const base = { action: 'check-isolation' as const, asOf: 'now', ownerTenant: 'a', intruderTenant: 'b', unprobed: [] as string[], intact: [{ object: 'webhook', ok: true, detail: 'unchanged' }], cleanup: [] as string[] };
    assert.equal(isolationReport({ ...base, rows: [row('isolated')] }).verdict, 'isolated');
    assert.equal(isolationReport({ ...base, rows: [row('isolated'), row('leak')] }).verdict, 'breached');
    assert.equal(isolationReport({ ...base, rows: [row('isolated')], intact: [{ object: 'webhook', ok: false, detail: 'disabled by someone' }] }).verdict, 'breached');
    assert.equal(isolationReport({ ...base, rows: [row('inconclusive')] }).verdict, 'incomplete');
    assert.equal(isolationReport({ ...base, rows: [row('isolated')], unprobed: ['GET /new'] }).verdict, 'incomplete');
  });
});

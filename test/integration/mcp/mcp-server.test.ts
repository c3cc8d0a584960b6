import { strict as assert } from 'node:assert';
import { auditRecordsUntil } from '../../support/audit-files';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { fixtureProject } from '../../support/fixture-project';
import { api, freshKey, KEY, startFleetServer } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/** A planted credential the embedded security-ai scan reports (an AWS access key id on line 2). */
const SECRET_FILE = "export const region = 'eu-west-1';\nexport const awsKey = 'AKIAQYLPMN5HHHFPZAM2';\n";

interface TextPart { type: 'text'; text: string }
type ToolResult = { isError?: boolean; content: Array<TextPart | { type: string; uri?: string }>; structuredContent?: Record<string, unknown> };

async function connect(url: string, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Client> {
  const client = new Client({ name: 'cadre-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const text = (r: ToolResult) => r.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text).join('\n');

/** A raw JSON-RPC POST to /mcp (for what the SDK client would never send: a wrong key, a browser's Origin). */
async function rawPost(url: string, headers: Record<string, string>) {
  const res = await request(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

describe('MCP server (Streamable HTTP at /mcp) against the SDK client', function () {
  this.timeout(90_000);
  let fleet: Awaited<ReturnType<typeof startFleetServer>>;
  const made: string[] = [];
  before(async () => {
    ensureBuilt();
    fleet = await startFleetServer();
  });
  after(async () => stop(fleet));

  it('initializes and lists the tools and the resource templates', async () => {
    const client = await connect(fleet.url);
    try {
      assert.equal(client.getServerVersion()?.name, 'cadre');
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(tools, ['cadre_cancel_execution', 'cadre_decide_approval', 'cadre_get_execution', 'cadre_invoke_agent', 'cadre_list_approvals', 'cadre_readiness', 'cadre_run_task', 'cadre_run_workflow']);
      const run = (await client.listTools()).tools.find((t) => t.name === 'cadre_run_task')!;
      assert.deepEqual((run.inputSchema as { required?: string[] }).required?.sort(), ['prompt', 'verb']);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
      assert.deepEqual(templates, ['cadre://executions/{id}/report', 'cadre://executions/{id}/sarif']);
    } finally {
      await client.close();
    }
  });

  it('runs a task verb with progress notifications mapped from the RIGOR phases, then answers its result', async () => {
    const client = await connect(fleet.url);
    try {
      const progress: Array<{ progress: number; total?: number; message?: string }> = [];
      const r = (await client.callTool({ name: 'cadre_run_task', arguments: { verb: 'review', prompt: 'review the project slow:review-ai:300', path: fleet.workspace, intelligence: 'core' } }, undefined, {
        onprogress: (p) => void progress.push(p),
      })) as ToolResult;
      assert.notEqual(r.isError, true, text(r));
      const s = r.structuredContent as { status: string; executionId: string; steps: Array<{ agentId: string; outcome: string }> };
      assert.equal(s.status, 'completed', text(r));
      assert.deepEqual(s.steps.map((x) => `${x.agentId} ${x.outcome}`), ['review-ai completed']);
      const messages = progress.map((p) => p.message ?? '');
      for (const phase of ['Research', 'Inspect', 'Generate', 'Optimize', 'Review']) {
        assert.ok(messages.includes(`review-ai: ${phase} started`), `phase_started ${phase} in ${JSON.stringify(messages)}`);
        assert.ok(messages.some((m) => m.startsWith(`review-ai: ${phase} completed in `)), `phase_completed ${phase}`);
      }
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, `progress increases: ${JSON.stringify(progress)}`);
      assert.equal(progress.at(-1)!.progress, 100);
      // The same execution reads back through the status tool and the report resource.
      const again = (await client.callTool({ name: 'cadre_get_execution', arguments: { executionId: s.executionId } })) as ToolResult;
      assert.equal((again.structuredContent as { status: string }).status, 'completed');
      const report = await client.readResource({ uri: `cadre://executions/${s.executionId}/report` });
      assert.match((report.contents[0] as { text: string }).text, new RegExp(`# Cadre execution ${s.executionId}[\\s\\S]*\\| 0 \\| review-ai \\| review \\| completed`));
    } finally {
      await client.close();
    }
  });

  it('answers a tool failure as an MCP error result, and the server keeps serving', async () => {
    const client = await connect(fleet.url);
    try {
      const missing = (await client.callTool({ name: 'cadre_get_execution', arguments: { executionId: 'task_000000000000000000000000' } })) as ToolResult;
      assert.equal(missing.isError, true);
      assert.match(text(missing), /ERR_NOT_FOUND: .*task_000000000000000000000000/);
      const badPath = (await client.callTool({ name: 'cadre_run_task', arguments: { verb: 'review', prompt: 'x', path: '/no/such/folder' } })) as ToolResult;
      assert.equal(badPath.isError, true);
      assert.match(text(badPath), /path \/no\/such\/folder does not exist/);
      const badArgs = (await client.callTool({ name: 'cadre_run_task', arguments: { verb: 'teleport', prompt: 'x' } })) as ToolResult;
      assert.equal(badArgs.isError, true, 'an argument outside the schema is an error result too');
      assert.equal((await client.listTools()).tools.length > 0, true, 'still serving');
      const health = await request(`${fleet.url}/v1/health`);
      assert.equal(health.statusCode, 200);
      await health.body.dump();
    } finally {
      await client.close();
    }
  });

  it('refuses a wrong key (401) and a cross-origin browser request (403) before any MCP message is read', async () => {
    const none = await rawPost(fleet.url, {});
    assert.equal(none.status, 401, none.body);
    assert.equal(none.headers['content-type'], 'application/problem+json');
    const wrong = await rawPost(fleet.url, { authorization: 'Bearer cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e99' });
    assert.equal(wrong.status, 401, wrong.body);
    assert.match(wrong.headers['www-authenticate'] as string, /invalid_token/);
    const evil = await rawPost(fleet.url, { authorization: `Bearer ${KEY}`, origin: 'http://evil.example' });
    assert.equal(evil.status, 403, evil.body);
    assert.equal(JSON.parse(evil.body).code, 'ERR_CROSS_ORIGIN');
    const port = new URL(fleet.url).port;
    const own = await rawPost(fleet.url, { authorization: `Bearer ${KEY}`, origin: `http://127.0.0.1:${port}` });
    assert.equal(own.status, 200, `the server's own origin is allowed: ${own.body}`);
    // The SDK client with a wrong key fails to connect.
    await assert.rejects(connect(fleet.url, { authorization: 'Bearer cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e99' }), /401|invalid|Unauthorized/i);
  });

  it('decides an approval through MCP: the audit trail names the key and MCP; an operator key is refused', async () => {
    const a = api(fleet.url, await freshKey(fleet.url));
    const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'build', input: { prompt: 'crash:planner-ai:9' } });
    assert.equal(r.status, 202, r.text);
    const wf = r.body['workflowId'] as string;
    await a.until(`/v1/approvals?execution_id=${wf}`, (b) => (b['approvals'] as unknown[]).length > 0);
    const client = await connect(fleet.url);
    try {
      const listed = (await client.callTool({ name: 'cadre_list_approvals', arguments: { executionId: wf } })) as ToolResult;
      const approvals = (listed.structuredContent as { approvals: Array<{ id: string; status: string }> }).approvals;
      assert.equal(approvals.length, 1, text(listed));
      const id = approvals[0]!.id;
      assert.match(text(listed), new RegExp(`${id} \\[pending\\]`));

      // ACMF applies as for REST: an operator key may not decide.
      const created = await request(`${fleet.url}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'op', plan: 'enterprise', role: 'operator' }) });
      const operatorKey = ((await created.body.json()) as { key: string }).key;
      const operator = await connect(fleet.url, { authorization: `Bearer ${operatorKey}` });
      try {
        const refused = (await operator.callTool({ name: 'cadre_decide_approval', arguments: { approvalId: id, approved: true } })) as ToolResult;
        assert.equal(refused.isError, true);
        assert.match(text(refused), /approver role/);
      } finally {
        await operator.close();
      }

      const d = (await client.callTool({ name: 'cadre_decide_approval', arguments: { approvalId: id, approved: false, reason: 'not from the agent session' } })) as ToolResult;
      assert.notEqual(d.isError, true, text(d));
      const decided = d.structuredContent as { status: string; decidedBy: string };
      assert.equal(decided.status, 'denied');
      assert.match(decided.decidedBy, /^key:key_[0-9a-f]{12}\/mcp$/);
      const twice = (await client.callTool({ name: 'cadre_decide_approval', arguments: { approvalId: id, approved: true } })) as ToolResult;
      assert.equal(twice.isError, true);
      assert.match(text(twice), /ERR_CONFLICT: approval .* is already denied/);
    } finally {
      await client.close();
    }
    const done = await a.until(`/api/workflows/${wf}/status`);
    assert.equal(done['status'], 'failed');
    // The audit trail (JSONL under the data directory) records the decision with the MCP actor.
    const records = await auditRecordsUntil(fleet.dataDir, 'approval.decided', (all) => all.some((x) => x.kind === 'approval.decided' && x.executionId === wf)).catch(() => []);
    const rec = records.find((x) => x.kind === 'approval.decided' && x.executionId === wf);
    assert.ok(rec, 'approval.decided is in the audit trail');
    assert.match(rec.actor, /^key:key_[0-9a-f]{12}\/mcp$/);
    assert.equal(rec.data['note'], 'via MCP');
    assert.equal(rec.data['approved'], false);
  });

  describe('with the embedded skills and CADRE_MCP_AUTH=none', () => {
    let server: ServerProcess & { url: string };
    let project: string;
    before(async () => {
      project = fixtureProject({ files: { 'src/config.ts': SECRET_FILE, 'README.md': '# app\n' } }, made);
      server = await startStandalone(tempDir(), { CADRE_API_KEY: KEY, CADRE_MCP_AUTH: 'none' }, ['--workspace', project]);
    });
    after(async () => stop(server));

    it('answers a loopback client without a key, and the security verb returns findings with their locations and SARIF', async () => {
      const client = await connect(server.url, {});
      try {
        const r = (await client.callTool({ name: 'cadre_run_task', arguments: { verb: 'security', prompt: 'scan for secrets' } })) as ToolResult;
        assert.notEqual(r.isError, true, text(r));
        const s = r.structuredContent as { status: string; executionId: string; findings: Array<{ agentId: string; file: string; startLine: number; ruleId: string; workspace: string }> };
        assert.equal(s.status, 'completed', text(r));
        const f = s.findings.find((x) => x.file === 'src/config.ts');
        assert.ok(f, `a finding in src/config.ts: ${text(r)}`);
        assert.equal(f.agentId, 'security-ai');
        assert.equal(f.startLine, 2);
        assert.equal(f.workspace, project);
        assert.match(text(r), /src\/config\.ts:2:\d+ (critical|high) /);
        const sarif = JSON.parse(((await client.readResource({ uri: `cadre://executions/${s.executionId}/sarif` })).contents[0] as { text: string }).text) as { version: string; runs: Array<{ results: Array<{ locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }> }> }> };
        assert.equal(sarif.version, '2.1.0');
        const locs = sarif.runs.flatMap((run) => run.results.flatMap((x) => x.locations.map((l) => `${l.physicalLocation.artifactLocation.uri}:${l.physicalLocation.region.startLine}`)));
        assert.ok(locs.includes('src/config.ts:2'), JSON.stringify(locs));
        // Without a key, deciding an approval is refused (it needs an approver key).
        const decide = (await client.callTool({ name: 'cadre_decide_approval', arguments: { approvalId: 'appr_x', approved: true } })) as ToolResult;
        assert.equal(decide.isError, true);
        assert.match(text(decide), /needs an API key with the approver role/);
      } finally {
        await client.close();
      }
      // Readiness runs deploy-ai on the server's workspace, as the editor's Readiness view does.
      const client2 = await connect(server.url, {});
      try {
        const ready = (await client2.callTool({ name: 'cadre_readiness', arguments: {} })) as ToolResult;
        assert.notEqual(ready.isError, true, text(ready));
        const r = ready.structuredContent as { ready: boolean; workspace: string; checks: Array<{ id: string; status: string }> };
        assert.equal(r.workspace, project);
        assert.deepEqual(r.checks.map((c) => c.id), ['clean-tree', 'branch-pushed', 'tests', 'coverage', 'critical-findings', 'review', 'approvals']);
        assert.equal(r.checks.find((c) => c.id === 'clean-tree')!.status, 'pass', text(ready));
        assert.match(text(ready), /^(Ready|Not ready) to deploy/);
        const onFile = (await client2.callTool({ name: 'cadre_readiness', arguments: { path: 'src/config.ts' } })) as ToolResult;
        assert.equal(onFile.isError, true);
        assert.match(text(onFile), /readiness checks a folder/);
      } finally {
        await client2.close();
      }
      // REST still wants the key: the setting concerns /mcp only.
      const rest = await request(`${server.url}/v1/agents/list`);
      assert.equal(rest.statusCode, 401);
      await rest.body.dump();
      // A wrong key sent anyway is refused, not ignored.
      const wrong = await rawPost(server.url, { authorization: 'Bearer cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e99' });
      assert.equal(wrong.status, 401, wrong.body);
    });
  });
});

/**
 * Redaction is total: a project with a fresh secret for every rule is scanned through the real server
 * (security-ai `secrets` and `scan`), then every channel a finding can leave by is searched for every
 * planted value: the API's answers (status, output, SARIF), the execution's SSE event stream, every file
 * the server wrote under its data directory (store, audit trail, event logs), its stdout and stderr, and
 * the LSP diagnostics made from the findings. The secrets-clean gate must have passed on the artifact, and
 * must fail on the same artifact with one secret put back.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { toDiagnostic } from '../../../server/src/lsp/diagnostics';
import { findSecrets } from '../../../server/src/skills/secret-rules';
import { SECRET_RULE_DEFS } from '../../../server/src/skills/security/rules';
import type { Finding } from '../../../server/src/skills/findings/finding';
import { api, freshKey, KEY, startFleetServer, type Json } from '../../support/fleet-server';
import { fixtureProject } from '../../support/fixture-project';
import { ensureBuilt, stop } from '../../support/server-process';
import { needlesOf, plantedProject, type PlantedProject } from './planted';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** The SSE replay of one execution, read until the stream has been quiet for a moment. */
async function eventStream(base: string, key: string, executionId: string): Promise<string> {
  const ac = new AbortController();
  const res = await request(`${base}/api/admin/events/stream?execution_id=${encodeURIComponent(executionId)}&last_event_id=0`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal: ac.signal,
  });
  assert.equal(res.statusCode, 200);
  let text = '';
  let quiet: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    const done = () => { ac.abort(); resolve(); };
    const arm = () => { clearTimeout(quiet); quiet = setTimeout(done, 1500); };
    arm();
    res.body.on('data', (c: Buffer) => { text += c.toString('utf8'); arm(); });
    res.body.on('error', () => resolve());
    res.body.on('end', () => { clearTimeout(quiet); resolve(); });
  });
  return text;
}

describe('redaction sweep: no planted secret leaves by any channel', function () {
  this.timeout(120_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let project: PlantedProject;
  let workspace: string;
  const made: string[] = [];
  const channels: Array<{ name: string; text: string }> = [];
  const outputs: Array<{ action: string; body: Json }> = [];

  before(async () => {
    ensureBuilt();
    project = plantedProject();
    workspace = fixtureProject({ files: project.files, git: false, prefix: 'cadre-planted-' }, made);
    server = await startFleetServer({ skills: false });
    const key = await freshKey(server.url);
    const a = api(server.url, key);
    for (const action of ['secrets', 'scan']) {
      const r = await a.post(`/api/agents/security-ai/${action}`, { prompt: 'find secrets', source: workspace });
      assert.equal(r.status, 202, r.text);
      channels.push({ name: `POST ${action}`, text: r.text });
      const statusUrl = r.body['statusUrl'] as string;
      const done = await a.until(statusUrl, undefined, 60_000);
      // A large output is stored as an attachment (the answer carries a preview): read the stored file.
      const out = done['output'] as { attachment?: string } | undefined;
      const full = out?.attachment ? JSON.parse(readFileSync(path.join(server.dataDir, 'attachments', out.attachment), 'utf8')) as Json : out;
      outputs.push({ action, body: { ...done, output: full } });
      channels.push({ name: `GET ${statusUrl}`, text: JSON.stringify(done) });
      channels.push({ name: `SSE ${action}`, text: await eventStream(server.url, key, r.body['executionId'] as string) });
    }
    // The store, the audit trail and the event logs: every file the server wrote, read as bytes.
    for (const f of filesUnder(server.dataDir)) {
      if (statSync(f).size < 64 * 1024 * 1024) channels.push({ name: `file ${path.relative(server.dataDir, f)}`, text: readFileSync(f).toString('latin1') });
    }
  });
  after(async () => { if (server) await stop(server); });

  it('ran both scans to completion and found a secret of every rule', () => {
    for (const { action, body } of outputs) assert.equal(body['status'], 'completed', `${action}: ${JSON.stringify(body['error'])}`);
    const findings = (outputs[0]!.body['output'] as { findings: Finding[] }).findings;
    const rules = new Set(findings.map((f) => f.ruleId));
    const missing = SECRET_RULE_DEFS.filter((r) => !rules.has(r.id)).map((r) => r.id);
    assert.deepEqual(missing, [], 'every rule fired on its planted secret');
    const files = channels.filter((c) => c.name.startsWith('file ')).map((c) => c.name.slice(5));
    console.log(`      swept ${channels.length + 3} channels; data directory files: ${files.join(', ')}`);
    assert.ok(files.some((f) => /^audit[/\\]audit-.*\.jsonl$/.test(f)), 'the audit trail is among the files swept');
    assert.ok(files.some((f) => /attachments[/\\]/.test(f)), 'the stored outputs are among the files swept');
    assert.ok(channels.filter((c) => c.name.startsWith('SSE')).every((c) => c.text.includes('data:')), 'the event streams replayed events');
  });

  it('holds no planted value (nor a 12-character slice of one) in any API answer, SSE event, store/audit/event file, log line or diagnostic', () => {
    const diagnostics = outputs.flatMap(({ body }) => ((body['output'] as { findings?: Finding[] } | undefined)?.findings ?? []).map((f) => toDiagnostic(f)));
    const all = [
      ...channels,
      { name: 'server stdout', text: server.stdout.join('\n') },
      { name: 'server stderr', text: server.stderr.join('\n') },
      { name: 'LSP diagnostics', text: JSON.stringify(diagnostics) },
    ];
    const leaks: string[] = [];
    for (const p of project.planted) {
      for (const needle of needlesOf(p.value)) {
        // JSON escapes `/` never, `\` always: look for the raw and the JSON-escaped form.
        const forms = [needle, JSON.stringify(needle).slice(1, -1)];
        for (const c of all) if (forms.some((n) => c.text.includes(n))) leaks.push(`${p.rule} in ${c.name}`);
      }
    }
    assert.deepEqual([...new Set(leaks)], []);
  });

  it('passes the secrets-clean gate on the real artifacts and fails it when a secret is put back', () => {
    for (const { action, body } of outputs) {
      const gates = JSON.stringify(body);
      assert.ok(!/secrets found/.test(gates), `${action}: the gate found nothing`);
      const output = body['output'] as { findings: Finding[] };
      assert.deepEqual(findSecrets(JSON.stringify(output)), [], `${action}: nothing secret-shaped in the output`);
      const leaked = structuredClone(output);
      const gh = project.planted.find((p) => p.rule === 'github-token')!;
      leaked.findings[0]!.snippet = `const github = '${gh.value}';`;
      assert.deepEqual(findSecrets(leaked.findings[0]!.snippet), ['github-token'], 'the gate sees a secret put back');
    }
  });

  it('uses the server key only as configured (sanity: the sweep would see a leak)', () => {
    // The sweep's search works: the API key the test sent is in no channel either, but a planted value
    // written into a channel on purpose is found.
    const probe = project.planted[0]!.value;
    assert.ok([{ text: `x${probe}y` }].some((c) => c.text.includes(needlesOf(probe)[0]!)));
    assert.ok(!channels.some((c) => c.text.includes(KEY)), 'the bootstrap key is never echoed');
  });
});

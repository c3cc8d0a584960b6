/** A real server process with the fleet test skills, and a small HTTP client for the tests. */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { ROOT, startStandalone, tempDir, type ServerProcess } from './server-process';

export const KEY = 'cadre_LqDip6vwP-i5vN_e4a5q6pYuF-dD0qen_ze9xrW4e98';
const SKILLS = path.join(ROOT, 'test/fixtures/skills/fleet-skills.cjs');

export interface Json { [k: string]: unknown }

export async function startFleetServer(opts: { dataDir?: string; effectsFile?: string; skills?: boolean; config?: string } = {}): Promise<ServerProcess & { url: string; dataDir: string; workspace: string }> {
  const dataDir = opts.dataDir ?? tempDir();
  const workspace = tempDir('cadre-ws-');
  writeFileSync(path.join(workspace, '.cadre.yaml'), `defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n${opts.config ?? ''}`);
  const p = await startStandalone(dataDir, { CADRE_API_KEY: KEY, ...(opts.effectsFile ? { CADRE_TEST_EFFECTS_FILE: opts.effectsFile } : {}) }, ['--workspace', workspace, ...(opts.skills === false ? [] : ['--skill-module', SKILLS])]);
  return Object.assign(p, { dataDir, workspace });
}

/** A fresh enterprise admin key: each key has its own rate-limit budget, so tests do not starve each other. */
export async function freshKey(base: string): Promise<string> {
  const res = await request(`${base}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'test', plan: 'enterprise', role: 'admin' }) });
  assert.equal(res.statusCode, 201);
  return ((await res.body.json()) as { key: string }).key;
}

export function api(base: string, key = KEY) {
  const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await request(`${base}${p}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: (text ? JSON.parse(text) : null) as Json, text };
  };
  return {
    call,
    get: (p: string) => call('GET', p),
    post: (p: string, body?: unknown) => call('POST', p, body ?? {}),
    /** Polls until the execution ends. */
    async until(p: string, done = (b: Json) => ['completed', 'failed', 'cancelled'].includes(b['status'] as string), timeoutMs = 20_000): Promise<Json> {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', p);
        assert.equal(r.status, 200, r.text);
        if (done(r.body)) return r.body;
        if (Date.now() > end) throw new Error(`${p} still ${r.body['status']}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    },
  };
}


/**
 * An HTTP client for the core-loop tests and the soak bench: a pool of generated enterprise keys
 * used in turn (each key has its own rate-limit budget: 167 requests a minute on the enterprise
 * plan, and the server offers no configurable plan), so a few hundred tasks and their status polls
 * fit without 429s; a 429 still waits for its Retry-After and tries again rather than failing.
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, tempDir, type ServerProcess } from '../../support/server-process';

export const TERMINAL = ['completed', 'failed', 'cancelled'];

export interface Reply { status: number; body: Json; text: string; headers: Record<string, string | string[] | undefined> }

export class PooledClient {
  private next = 0;
  /** 429 answers met (and waited out). */
  rateLimited = 0;
  requests = 0;
  private constructor(readonly base: string, readonly keys: string[]) {}

  /** Creates `n` fresh enterprise admin keys with the server's bootstrap key. */
  static async create(base: string, n: number): Promise<PooledClient> {
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(`${base}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ label: `core-loop-${i}`, plan: 'enterprise', role: 'admin' }) });
      const text = await res.body.text();
      assert.equal(res.statusCode, 201, text);
      keys.push((JSON.parse(text) as { key: string }).key);
    }
    return new PooledClient(base, keys);
  }

  async call(method: string, p: string, body?: unknown): Promise<Reply> {
    for (;;) {
      const key = this.keys[this.next++ % this.keys.length]!;
      this.requests++;
      const res = await request(`${this.base}${p}`, {
        method: method as 'GET',
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.body.text();
      if (res.statusCode === 429) {
        this.rateLimited++;
        const after = Number(res.headers['retry-after'] ?? 1);
        await sleep(Math.min(5, Math.max(0.2, after / this.keys.length)) * 1000);
        continue;
      }
      return { status: res.statusCode, body: (text ? JSON.parse(text) : null) as Json, text, headers: res.headers };
    }
  }

  get(p: string): Promise<Reply> { return this.call('GET', p); }
  post(p: string, body: unknown = {}): Promise<Reply> { return this.call('POST', p, body); }

  /** Polls a status URL until the execution is terminal (or `done` says so). */
  async until(url: string, timeoutMs = 60_000, done = (b: Json) => TERMINAL.includes(b['status'] as string), intervalMs = 250): Promise<Json> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.get(url);
      assert.equal(r.status, 200, r.text);
      if (done(r.body)) return r.body;
      if (Date.now() > end) throw new Error(`${url} still ${String(r.body['status'])} after ${timeoutMs} ms: ${r.text.slice(0, 1500)}`);
      await sleep(intervalMs);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A standalone server (dist/server.js, real agent workers and embedded skills, no language model)
 * whose configuration puts every agent in ASSISTED: only critical actions need a person, so
 * tester-ai running the project's test command (risk low) asks nobody. Its --workspace is an empty
 * folder holding only that configuration, so requests name their project with `source`.
 */
/** A server with every agent ASSISTED; given `dataDir` and `workspace`, the same install restarted. */
export async function startCoreLoopServer(opts: { keys?: number; dataDir?: string; workspace?: string } = {}): Promise<{ server: ServerProcess & { url: string }; client: PooledClient; dataDir: string; workspace: string }> {
  ensureBuilt();
  const dataDir = opts.dataDir ?? tempDir('cadre-core-loop-data-');
  const workspace = opts.workspace ?? tempDir('cadre-core-loop-ws-');
  if (!opts.workspace) writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  acmf_mode: ASSISTED\n');
  const server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
  const client = await PooledClient.create(server.url, opts.keys ?? 4);
  return { server, client, dataDir, workspace };
}

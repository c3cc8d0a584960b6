/**
 * A GitHub REST API stand-in on loopback speaking the shapes octokit reads (bodies from
 * test/fixtures/github/, modelled on GitHub's OpenAPI examples): app JWTs are verified (RS256 with the
 * app's public key, `iss` = the app id), installation tokens issued and required, and the Git Data API,
 * pulls, labels and comments keep real state, so a test counts branches and PRs in "GitHub".
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

const FIX = path.join(__dirname, '../../fixtures/github');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(FIX, `${name}.json`), 'utf8')) as Record<string, unknown>;

export function rsaKeyPair(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })) };
}

export interface StandinOptions {
  owner?: string;
  repo?: string;
  appId: number;
  installationId: number;
  publicKey: KeyObject;
  permissions?: Record<string, string>;
  /** Refs matching this are refused like a ruleset restricting creations (422). */
  protect?: RegExp;
  /** The first N requests to /repos/* answer 403 with X-RateLimit-Remaining: 0 (reset in 1 s). */
  rateLimitFirst?: number;
  /** POST /pulls: create the PR, then never answer (the caller gets killed meanwhile). */
  hangAfterPullCreate?: boolean;
}

interface Tree { entries: Map<string, { sha: string; mode: string }> }
interface Commit { tree: string; parents: string[]; message: string }
export interface Pull { number: number; head: string; base: string; title: string; body: string; headSha: string; state: string; merged: boolean; labels: string[]; comments: string[] }

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

export class GithubStandin {
  server!: Server;
  url = '';
  readonly owner: string;
  readonly repo: string;
  readonly blobs = new Map<string, string>();
  readonly trees = new Map<string, Tree>();
  readonly commits = new Map<string, Commit>();
  readonly refs = new Map<string, string>();
  readonly pulls: Pull[] = [];
  readonly requests: Array<{ method: string; path: string; status: number }> = [];
  readonly tokens = new Set<string>();
  tokensIssued = 0;
  private rateLimited = 0;
  /** Resolves when a hung PR creation arrived. */
  pullCreateArrived: Promise<void>;
  private arrived!: () => void;

  constructor(readonly opts: StandinOptions) {
    this.owner = opts.owner ?? 'octo-org';
    this.repo = opts.repo ?? 'service';
    this.pullCreateArrived = new Promise((r) => (this.arrived = r));
    const blob = this.addBlob('export const ok = true;\n');
    const tree = this.addTree(new Map([['src/index.ts', { sha: blob, mode: '100644' }]]));
    const commit = this.addCommit({ tree, parents: [], message: 'initial' });
    this.refs.set('heads/main', commit);
  }

  get full(): string {
    return `${this.owner}/${this.repo}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Branches other than main. */
  branches(): string[] {
    return [...this.refs.keys()].filter((r) => r !== 'heads/main').map((r) => r.slice('heads/'.length));
  }

  fileAt(ref: string, file: string): string | undefined {
    const commit = this.commits.get(this.refs.get(`heads/${ref}`) ?? '');
    const e = commit ? this.trees.get(commit.tree)?.entries.get(file) : undefined;
    return e ? this.blobs.get(e.sha) : undefined;
  }

  private addBlob(content: string): string {
    const sha = sha1(`blob ${content}`);
    this.blobs.set(sha, content);
    return sha;
  }

  private addTree(entries: Map<string, { sha: string; mode: string }>): string {
    const sha = sha1(`tree ${JSON.stringify([...entries].sort())}`);
    this.trees.set(sha, { entries });
    return sha;
  }

  private addCommit(c: Commit): string {
    const sha = sha1(`commit ${JSON.stringify(c)} ${randomBytes(4).toString('hex')}`);
    this.commits.set(sha, c);
    return sha;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method: req.method ?? '', path: url.pathname, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3', ...headers });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    const fail = (status: number, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      send(status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status), ...extra }, headers);
    const auth = String(req.headers['authorization'] ?? '');
    const p = url.pathname;

    if (p.startsWith('/app/')) {
      const jwt = /^bearer (.+)$/i.exec(auth)?.[1];
      if (!jwt || !this.validJwt(jwt)) return fail(401, 'A JSON web token could not be decoded');
      const m = /^\/app\/installations\/(\d+)(\/access_tokens)?$/.exec(p);
      if (!m || Number(m[1]) !== this.opts.installationId) return fail(404, 'Not Found');
      const perms = this.opts.permissions ?? { contents: 'write', pull_requests: 'write', metadata: 'read' };
      if (m[2] && req.method === 'POST') {
        const token = `ghs_${randomBytes(18).toString('hex')}`;
        this.tokens.add(token);
        this.tokensIssued++;
        return send(201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: perms, repository_selection: 'selected' });
      }
      return send(200, { ...fixture('installation'), id: this.opts.installationId, app_id: this.opts.appId, permissions: perms,
        access_tokens_url: `${this.url}/app/installations/${this.opts.installationId}/access_tokens` });
    }

    const token = /^token (.+)$/i.exec(auth)?.[1];
    if (!token || !this.tokens.has(token)) return fail(401, 'Bad credentials');
    const prefix = `/repos/${this.owner}/${this.repo}`;
    if (!p.startsWith(prefix)) return fail(404, 'Not Found');
    if (this.rateLimited < (this.opts.rateLimitFirst ?? 0)) {
      this.rateLimited++;
      return fail(403, 'API rate limit exceeded for installation ID 1.', {}, { 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '5000', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000)) });
    }
    const rest = p.slice(prefix.length);
    const perms = this.opts.permissions ?? { contents: 'write', pull_requests: 'write', metadata: 'read' };
    const canWrite = (k: string) => perms[k] === 'write';
    let m: RegExpExecArray | null;

    if (rest === '' && req.method === 'GET') return send(200, { ...fixture('repository'), name: this.repo, full_name: this.full });
    if ((m = /^\/git\/ref\/(.+)$/.exec(rest)) && req.method === 'GET') {
      const ref = decodeURIComponent(m[1]!);
      const sha = this.refs.get(ref);
      return sha ? send(200, { ref: `refs/${ref}`, node_id: 'REF_x', url: `${this.url}${prefix}/git/refs/${ref}`, object: { type: 'commit', sha, url: `${this.url}${prefix}/git/commits/${sha}` } }) : fail(404, 'Not Found');
    }
    if ((m = /^\/git\/commits\/([0-9a-f]+)$/.exec(rest)) && req.method === 'GET') {
      const c = this.commits.get(m[1]!);
      return c ? send(200, { sha: m[1], node_id: 'C_x', url: '', html_url: '', message: c.message, tree: { sha: c.tree, url: '' }, parents: c.parents.map((s) => ({ sha: s, url: '', html_url: '' })), author: null, committer: null, verification: { verified: false, reason: 'unsigned', signature: null, payload: null } }) : fail(404, 'Not Found');
    }
    if (req.method !== 'GET' && rest.startsWith('/git/') && !canWrite('contents')) return fail(403, 'Resource not accessible by integration');
    if (rest === '/git/blobs' && req.method === 'POST') {
      const content = body['encoding'] === 'base64' ? Buffer.from(String(body['content']), 'base64').toString('utf8') : String(body['content']);
      const sha = this.addBlob(content);
      return send(201, { sha, url: `${this.url}${prefix}/git/blobs/${sha}` });
    }
    if (rest === '/git/trees' && req.method === 'POST') {
      const base = body['base_tree'] ? this.trees.get(String(body['base_tree'])) : undefined;
      if (body['base_tree'] && !base) return fail(422, 'Invalid tree info');
      const entries = new Map(base?.entries ?? []);
      for (const e of body['tree'] as Array<{ path: string; mode: string; sha: string | null }>) {
        if (e.sha === null) entries.delete(e.path);
        else entries.set(e.path, { sha: e.sha, mode: e.mode });
      }
      const sha = this.addTree(entries);
      return send(201, { sha, url: '', truncated: false, tree: [...entries].map(([p2, e]) => ({ path: p2, mode: e.mode, type: 'blob', sha: e.sha })) });
    }
    if (rest === '/git/commits' && req.method === 'POST') {
      const sha = this.addCommit({ tree: String(body['tree']), parents: (body['parents'] as string[]) ?? [], message: String(body['message']) });
      return send(201, { sha, node_id: 'C_x', url: '', html_url: '', message: body['message'], tree: { sha: body['tree'], url: '' }, parents: [], author: null, committer: null, verification: { verified: false, reason: 'unsigned', signature: null, payload: null } });
    }
    if (rest === '/git/refs' && req.method === 'POST') {
      const ref = String(body['ref']).replace(/^refs\//, '');
      if (this.opts.protect?.test(ref)) return fail(422, 'Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n', { errors: ['Cannot create ref due to creations being restricted.'] });
      if (this.refs.has(ref)) return fail(422, 'Reference already exists');
      this.refs.set(ref, String(body['sha']));
      return send(201, { ref: `refs/${ref}`, node_id: 'REF_x', url: '', object: { type: 'commit', sha: body['sha'], url: '' } });
    }
    if (rest === '/pulls' && req.method === 'GET') {
      const head = url.searchParams.get('head');
      const state = url.searchParams.get('state') ?? 'open';
      const list = this.pulls.filter((pr) => (!head || `${this.owner}:${pr.head}` === head) && (state === 'all' || pr.state === state));
      return send(200, list.map((pr) => this.pullJson(pr)));
    }
    if (rest === '/pulls' && req.method === 'POST') {
      if (!canWrite('pull_requests')) return fail(403, 'Resource not accessible by integration');
      const head = String(body['head']);
      const headSha = this.refs.get(`heads/${head}`);
      if (!headSha) return fail(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] });
      if (this.pulls.some((pr) => pr.head === head && pr.state === 'open')) return fail(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${this.owner}:${head}.` }] });
      const pr: Pull = { number: this.pulls.length + 1, head, base: String(body['base']), title: String(body['title']), body: String(body['body'] ?? ''), headSha, state: 'open', merged: false, labels: [], comments: [] };
      this.pulls.push(pr);
      if (this.opts.hangAfterPullCreate) {
        this.arrived();
        return; // never answered
      }
      return send(201, this.pullJson(pr));
    }
    if ((m = /^\/pulls\/(\d+)(\/files)?$/.exec(rest)) && req.method === 'GET') {
      const pr = this.pulls.find((x) => x.number === Number(m![1]));
      if (!pr) return fail(404, 'Not Found');
      if (!m[2]) return send(200, this.pullJson(pr));
      return send(200, this.pullFiles(pr));
    }
    if ((m = /^\/issues\/(\d+)\/(labels|comments)$/.exec(rest)) && req.method === 'POST') {
      const pr = this.pulls.find((x) => x.number === Number(m![1]));
      if (!pr) return fail(404, 'Not Found');
      if (m[2] === 'labels') {
        for (const l of body['labels'] as string[]) if (!pr.labels.includes(l)) pr.labels.push(l);
        return send(200, pr.labels.map((name, i) => ({ id: i + 1, node_id: 'L_x', url: '', name, color: 'ededed', default: false, description: null })));
      }
      pr.comments.push(String(body['body']));
      return send(201, { id: pr.comments.length, node_id: 'IC_x', url: '', html_url: '', body: body['body'], user: { login: 'cadre-agents[bot]', type: 'Bot' }, created_at: new Date().toISOString(), updated_at: new Date().toISOString() });
    }
    return fail(404, 'Not Found');
  }

  private validJwt(jwt: string): boolean {
    const [h, p, s] = jwt.split('.');
    if (!h || !p || !s) return false;
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
    if (header.alg !== 'RS256') return false;
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), this.opts.publicKey, Buffer.from(s, 'base64url'))) return false;
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss?: unknown; exp?: number };
    return Number(claims.iss) === this.opts.appId && (claims.exp ?? 0) * 1000 > Date.now();
  }

  private pullJson(pr: Pull): Record<string, unknown> {
    const base = fixture('pull-request');
    const api = `${this.url}/repos/${this.full}`;
    return {
      ...base, number: pr.number, id: pr.number, title: pr.title, body: pr.body, state: pr.state, merged: pr.merged, merged_at: pr.merged ? new Date().toISOString() : null,
      url: `${api}/pulls/${pr.number}`, html_url: `https://github.com/${this.full}/pull/${pr.number}`,
      head: { ...(base['head'] as object), ref: pr.head, label: `${this.owner}:${pr.head}`, sha: pr.headSha },
      base: { ...(base['base'] as object), ref: pr.base, sha: this.refs.get(`heads/${pr.base}`) ?? '' },
      labels: pr.labels.map((name, i) => ({ id: i + 1, name })),
    };
  }

  private pullFiles(pr: Pull): unknown[] {
    const tree = (ref: string) => this.trees.get(this.commits.get(ref)?.tree ?? '')?.entries ?? new Map<string, { sha: string; mode: string }>();
    const head = tree(pr.headSha);
    const base = tree(this.refs.get(`heads/${pr.base}`) ?? '');
    const out: unknown[] = [];
    for (const file of new Set([...head.keys(), ...base.keys()])) {
      const a = base.get(file)?.sha;
      const b = head.get(file)?.sha;
      if (a === b) continue;
      const before = a ? this.blobs.get(a)!.split('\n') : [];
      const after = b ? this.blobs.get(b)!.split('\n') : [];
      const additions = after.filter((l) => !before.includes(l)).length;
      const deletions = before.filter((l) => !after.includes(l)).length;
      out.push({ sha: b ?? a, filename: file, status: !a ? 'added' : !b ? 'removed' : 'modified', additions, deletions, changes: additions + deletions, blob_url: '', raw_url: '', contents_url: '', patch: [...before.filter((l) => !after.includes(l)).map((l) => `-${l}`), ...after.filter((l) => !before.includes(l)).map((l) => `+${l}`)].join('\n') });
    }
    return out;
  }
}

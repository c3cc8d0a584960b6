/**
 * One repository through one GitHub App installation, with octokit: `@octokit/auth-app` signs the
 * app JWT (RS256) from the PEM and fetches installation tokens, which it caches until they expire;
 * the throttling plugin waits out primary and secondary rate limits (X-RateLimit-*, Retry-After) and
 * spaces content-creating requests as GitHub asks; the retry plugin retries server errors.
 * Commits go through the Git Data API (blobs, tree, commit, ref): no git credential ever reaches a
 * worktree or a child process. Errors become IntegrationError with the reason and GitHub's message.
 */
import type { Octokit as OctokitType } from '@octokit/rest' with { 'resolution-mode': 'import' };
import type { GithubAppCredential } from './credentials';
import { IntegrationError } from './errors';

export const DEFAULT_API_URL = 'https://api.github.com';

/** The app permissions the contract requires (repository permissions of the GitHub App). */
export const REQUIRED_PERMISSIONS: Readonly<Record<string, 'read' | 'write'>> = { contents: 'write', pull_requests: 'write', metadata: 'read' };

export interface GithubTarget {
  apiUrl: string;
  /** `owner/name`. */
  repo: string;
}

export interface PullRef { number: number; url: string; htmlUrl: string; headSha: string; headRef: string; state: string; merged: boolean }
export interface FileChange { path: string; /** 120000: a symlink (content: its target path). */ mode?: '100644' | '100755' | '120000'; /** null: delete the file. */ content: Buffer | null }
export interface PullFile { path: string; status: string; additions: number; deletions: number; patch: string | null }

export interface GithubApiOptions {
  /** false in tests: no pause between writes (production keeps GitHub's one-second spacing). */
  writeSpacing?: boolean;
  /** Retries of 5xx and of rate-limited requests (default 3 and 2). */
  retries?: number;
  rateLimitRetries?: number;
  log?: (line: string) => void;
}

type OctokitCtor = new (opts: Record<string, unknown>) => OctokitType;
let loaded: Promise<{ Octokit: OctokitCtor; createAppAuth: unknown }> | null = null;

/** The octokit packages are ES modules: loaded once, on the first integration call. */
function loadOctokit(): Promise<{ Octokit: OctokitCtor; createAppAuth: unknown }> {
  return (loaded ??= (async () => {
    const [{ Octokit }, { createAppAuth }, { throttling }, { retry }] = await Promise.all([
      import('@octokit/rest'), import('@octokit/auth-app'), import('@octokit/plugin-throttling'), import('@octokit/plugin-retry'),
    ]);
    return { Octokit: Octokit.plugin(throttling, retry) as unknown as OctokitCtor, createAppAuth };
  })());
}

function statusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown })?.status;
  return typeof s === 'number' ? s : undefined;
}

/** GitHub's own message (its `message` and first error), for the error shown to people. */
function githubMessage(err: unknown): string {
  const data = (err as { response?: { data?: { message?: string; errors?: Array<{ message?: string } | string> } } })?.response?.data;
  const first = data?.errors?.[0];
  const extra = typeof first === 'string' ? first : first?.message;
  const main = String(data?.message ?? (err as Error)?.message ?? String(err)).replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  const more = extra ? String(extra).replace(/\s+/g, ' ').trim().replace(/\.$/, '') : '';
  return (more && !main.includes(more) ? `${main}: ${more}` : main).slice(0, 500);
}

export class GithubApi {
  private constructor(
    private readonly octokit: OctokitType,
    readonly target: GithubTarget,
    readonly credential: Pick<GithubAppCredential, 'appId' | 'installationId'>,
    private readonly owner: string,
    private readonly name: string,
  ) {}

  static async connect(cred: GithubAppCredential, target: GithubTarget, opts: GithubApiOptions = {}): Promise<GithubApi> {
    const { Octokit, createAppAuth } = await loadOctokit();
    const log = opts.log ?? (() => {});
    const limiter = opts.writeSpacing === false ? await noSpacing() : {};
    const rateLimitRetries = opts.rateLimitRetries ?? 2;
    const octokit = new Octokit({
      baseUrl: target.apiUrl.replace(/\/+$/, ''),
      authStrategy: createAppAuth,
      auth: { appId: cred.appId, privateKey: cred.privateKeyPem, installationId: cred.installationId },
      userAgent: 'cadre-github-integration',
      // octokit's own logger would print request errors; Cadre logs what it decides to.
      log: { debug: () => {}, info: () => {}, warn: (m: string) => log(`github: ${m}`), error: () => {} },
      retry: { retries: opts.retries ?? 3 },
      throttle: {
        ...limiter,
        onRateLimit: (retryAfter: number, o: { method: string; url: string }, _k: unknown, count: number) => {
          log(`github: rate limit reached on ${o.method} ${o.url}; retrying in ${retryAfter}s (${count + 1}/${rateLimitRetries})`);
          return count < rateLimitRetries;
        },
        onSecondaryRateLimit: (retryAfter: number, o: { method: string; url: string }, _k: unknown, count: number) => {
          log(`github: secondary rate limit on ${o.method} ${o.url}; retrying in ${retryAfter}s (${count + 1}/${rateLimitRetries})`);
          return count < rateLimitRetries;
        },
      },
    });
    const [owner, name] = target.repo.split('/') as [string, string];
    return new GithubApi(octokit, target, { appId: cred.appId, installationId: cred.installationId }, owner, name);
  }

  /**
   * The installation's permissions against the contract's list (GET /app/installations/{id}, app JWT).
   * Throws naming every missing or too-weak permission; returns what the installation has.
   */
  async checkPermissions(): Promise<Record<string, string>> {
    let perms: Record<string, string>;
    try {
      const r = await this.octokit.request('GET /app/installations/{installation_id}', { installation_id: this.credential.installationId });
      perms = (r.data.permissions ?? {}) as Record<string, string>;
    } catch (err) {
      throw this.translate(err, 'reading the app installation');
    }
    const missing = Object.entries(REQUIRED_PERMISSIONS)
      .filter(([k, need]) => !(perms[k] === 'write' || (need === 'read' && perms[k] === 'read')))
      .map(([k, need]) => `${label(k)} (${need === 'write' ? 'read and write' : 'read-only'}; has ${perms[k] ?? 'none'})`);
    if (missing.length > 0) {
      throw new IntegrationError('missing_permissions',
        `GitHub App ${this.credential.appId} installation ${this.credential.installationId} lacks the repository permission${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; ` +
        'grant them in the app settings (Permissions & events) and accept the new permissions on the installation',
        { missing: Object.keys(REQUIRED_PERMISSIONS).filter((k) => !(perms[k] === 'write' || (REQUIRED_PERMISSIONS[k] === 'read' && perms[k] === 'read'))), has: perms });
    }
    return perms;
  }

  /** The repository's default branch and its head commit (installation token). */
  async defaultBranch(): Promise<{ name: string; sha: string }> {
    try {
      const repo = await this.octokit.rest.repos.get({ owner: this.owner, repo: this.name });
      const branch = repo.data.default_branch;
      const ref = await this.octokit.rest.git.getRef({ owner: this.owner, repo: this.name, ref: `heads/${branch}` });
      return { name: branch, sha: ref.data.object.sha };
    } catch (err) {
      throw this.translate(err, `reading ${this.target.repo}`);
    }
  }

  /** The head commit of `branch`, or null when GitHub has no such branch. */
  async branchHead(branch: string): Promise<string | null> {
    try {
      const ref = await this.octokit.rest.git.getRef({ owner: this.owner, repo: this.name, ref: `heads/${branch}` });
      return ref.data.object.sha;
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw this.translate(err, `reading branch ${branch}`);
    }
  }

  /**
   * One commit with `files` on top of `baseSha`, then the NEW branch `branch` pointing at it (Git
   * Data API). Creating the ref is the last step: the branch appears complete or not at all.
   */
  async commitBranch(req: { branch: string; baseSha: string; files: FileChange[]; message: string }): Promise<{ sha: string }> {
    const { owner, name: repo } = this;
    try {
      const base = await this.octokit.rest.git.getCommit({ owner, repo, commit_sha: req.baseSha });
      const tree = [];
      for (const f of req.files) {
        if (f.content === null) {
          tree.push({ path: f.path, mode: f.mode ?? '100644', type: 'blob' as const, sha: null });
          continue;
        }
        const blob = await this.octokit.rest.git.createBlob({ owner, repo, content: f.content.toString('base64'), encoding: 'base64' });
        tree.push({ path: f.path, mode: f.mode ?? '100644', type: 'blob' as const, sha: blob.data.sha });
      }
      const newTree = await this.octokit.rest.git.createTree({ owner, repo, base_tree: base.data.tree.sha, tree });
      const commit = await this.octokit.rest.git.createCommit({ owner, repo, message: req.message, tree: newTree.data.sha, parents: [req.baseSha] });
      await this.octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${req.branch}`, sha: commit.data.sha });
      return { sha: commit.data.sha };
    } catch (err) {
      throw this.translate(err, `pushing branch ${req.branch}`, req.branch);
    }
  }

  /** The pull request (any state) whose head is `branch` in this repository, or null. */
  async findPull(branch: string): Promise<PullRef | null> {
    try {
      const r = await this.octokit.rest.pulls.list({ owner: this.owner, repo: this.name, head: `${this.owner}:${branch}`, state: 'all', per_page: 10 });
      const pr = r.data.find((p) => p.head.ref === branch);
      return pr ? pullRef(pr) : null;
    } catch (err) {
      throw this.translate(err, `looking for the pull request of ${branch}`);
    }
  }

  async openPull(req: { branch: string; base: string; title: string; body: string }): Promise<PullRef> {
    try {
      const r = await this.octokit.rest.pulls.create({ owner: this.owner, repo: this.name, head: req.branch, base: req.base, title: req.title, body: req.body, maintainer_can_modify: true });
      return pullRef(r.data);
    } catch (err) {
      throw this.translate(err, `opening the pull request of ${req.branch}`, req.base);
    }
  }

  async getPull(number: number): Promise<PullRef> {
    try {
      return pullRef((await this.octokit.rest.pulls.get({ owner: this.owner, repo: this.name, pull_number: number })).data);
    } catch (err) {
      throw this.translate(err, `reading pull request #${number}`);
    }
  }

  async addLabels(number: number, labels: string[]): Promise<void> {
    try {
      await this.octokit.rest.issues.addLabels({ owner: this.owner, repo: this.name, issue_number: number, labels });
    } catch (err) {
      throw this.translate(err, `labelling pull request #${number}`);
    }
  }

  async comment(number: number, body: string): Promise<{ id: number }> {
    try {
      const r = await this.octokit.rest.issues.createComment({ owner: this.owner, repo: this.name, issue_number: number, body });
      return { id: r.data.id };
    } catch (err) {
      throw this.translate(err, `commenting on pull request #${number}`);
    }
  }

  /** The files of a pull request with their patches (what review-ai reads). */
  async pullFiles(number: number): Promise<PullFile[]> {
    try {
      const files = await this.octokit.paginate(this.octokit.rest.pulls.listFiles, { owner: this.owner, repo: this.name, pull_number: number, per_page: 100 });
      return files.map((f) => ({ path: f.filename, status: f.status, additions: f.additions, deletions: f.deletions, patch: f.patch ?? null }));
    } catch (err) {
      throw this.translate(err, `reading the files of pull request #${number}`);
    }
  }

  /** GitHub's answer as an IntegrationError naming what failed and why (the contract's three causes named). */
  private translate(err: unknown, doing: string, branch?: string): IntegrationError {
    const status = statusOf(err);
    const msg = githubMessage(err);
    const at = `${doing} in ${this.target.repo} (${this.target.apiUrl})`;
    if (status === 401) {
      return new IntegrationError('auth_failed', `GitHub refused the app's credentials while ${at}: ${msg}. Check AppID ${this.credential.appId} and PrivateKeyPEM in the credential secret (snake_case field names read as AppID=0)`, { status });
    }
    if (status === 404 && doing.startsWith('reading the app installation')) {
      return new IntegrationError('installation_not_found', `GitHub App ${this.credential.appId} has no installation ${this.credential.installationId}: ${msg}`, { status });
    }
    if (status === 404 && doing.startsWith('reading ') && !doing.startsWith('reading branch')) {
      return new IntegrationError('repository_not_found', `${at}: not found; is the app installed on ${this.target.repo}? (${msg})`, { status });
    }
    if ((status === 422 || status === 409 || status === 403) && /protected branch|branch protection|rule violation|repository rule|restricted|required status check|review is required/i.test(msg)) {
      return new IntegrationError('branch_protection', `branch protection of ${this.target.repo} refused ${doing}${branch && !doing.includes(branch) ? ` (${branch})` : ''}: ${msg}. Allow the app to create branches matching cadre/* (rulesets or branch protection rules) or exempt it`, { status, branch: branch ?? null });
    }
    if (status === 403 && /resource not accessible by integration/i.test(msg)) {
      return new IntegrationError('missing_permissions', `the GitHub App may not do this while ${at}: ${msg}. It needs Contents and Pull requests read and write, Metadata read-only`, { status });
    }
    return new IntegrationError('github_error', `GitHub answered ${status ?? 'no status'} while ${at}: ${msg}`, { status: status ?? null });
  }
}

function label(permission: string): string {
  return ({ contents: 'Contents', pull_requests: 'Pull requests', metadata: 'Metadata' } as Record<string, string>)[permission] ?? permission;
}

interface RawPull { number: number; url: string; html_url: string; state: string; merged_at?: string | null; merged?: boolean; head: { sha: string; ref: string } }
function pullRef(p: RawPull): PullRef {
  return { number: p.number, url: p.url, htmlUrl: p.html_url, headSha: p.head.sha, headRef: p.head.ref, state: p.state, merged: p.merged === true || !!p.merged_at };
}

/** Throttling groups without the pause between writes (tests against a loopback stand-in). */
async function noSpacing(): Promise<Record<string, unknown>> {
  const Bottleneck = (await import('bottleneck')).default;
  return {
    write: new Bottleneck.Group({ maxConcurrent: 1, minTime: 0 }),
    notifications: new Bottleneck.Group({ maxConcurrent: 1, minTime: 0 }),
  };
}

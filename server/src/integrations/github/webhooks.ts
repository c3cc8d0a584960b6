/**
 * Inbound GitHub webhooks (`POST /api/webhooks/github`, contract Authentication 5): the
 * X-Hub-Signature-256 HMAC is verified over the exact bytes received with the WebhookSecret of the
 * integration of the payload's repository (constant-time, @octokit/webhooks-methods), 401 otherwise.
 * A verified delivery is answered at once; it is processed afterwards, once per X-GitHub-Delivery:
 *  - pull_request / pull_request_review: the PR flow's record (merged → `code.merged`, a person's approval);
 *  - workflow_run, workflow_job, check_suite, check_run: CI results per head commit (readiness, merge rules);
 *  - push and the rest: audited only.
 */
import type { AuditTrail } from '../../engine/ports';
import type { GithubIntegrations } from './github-integrations';
import type { GithubIntegrationRecord } from './registrations';

type Verify = (secret: string, payload: string, signature: string) => Promise<boolean>;
let verifyFn: Promise<Verify> | null = null;
const loadVerify = (): Promise<Verify> => (verifyFn ??= import('@octokit/webhooks-methods').then((m) => m.verify as Verify));

export interface PullEventSink {
  onPullEvent(ev: { integrationId: string; branch: string; action: string; merged?: boolean; headSha?: string; review?: { state: string; by: string; bot: boolean } }): Promise<unknown>;
}

export interface WebhookResult { status: 200 | 400 | 401; body: { ok: boolean; delivery: string | null; duplicate?: boolean; integration_id?: string; detail?: string } }

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export class GithubWebhookReceiver {
  /** Processing in flight (tests wait for it; nothing else does). */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: { integrations: GithubIntegrations; audit: AuditTrail; pulls?: PullEventSink; log(line: string): void }) {}

  async receive(headers: Record<string, string | string[] | undefined>, raw: Buffer, payload: unknown): Promise<WebhookResult> {
    const event = str(headers['x-github-event']);
    const delivery = str(headers['x-github-delivery']);
    const signature = str(headers['x-hub-signature-256']);
    if (!event || !delivery) return { status: 400, body: { ok: false, delivery, detail: 'X-GitHub-Event and X-GitHub-Delivery are required' } };
    if (!signature || !/^sha256=[0-9a-f]{64}$/i.test(signature)) return { status: 401, body: { ok: false, delivery, detail: 'X-Hub-Signature-256 is missing or not sha256=<hex>' } };
    const integ = await this.verified(obj(payload), raw, signature);
    if (!integ) {
      this.deps.log(`github webhook ${delivery} (${event}): the signature matches no integration's WebhookSecret; answered 401`);
      return { status: 401, body: { ok: false, delivery, detail: 'the signature does not verify with the WebhookSecret of an integration of this repository (a secret mismatch: regenerate it and set it in the app settings and the secret)' } };
    }
    if (!(await this.deps.integrations.firstDelivery(delivery, event, integ.id, obj(payload)))) return { status: 200, body: { ok: true, delivery, duplicate: true, integration_id: integ.id } };
    // Answered now; processed next (GitHub gives a delivery 10 s). Durably pending until processed.
    this.schedule(integ, event, delivery, obj(payload));
    return { status: 200, body: { ok: true, delivery, integration_id: integ.id } };
  }

  /** Processes the deliveries a stop left pending (answered 200, never processed); returns how many. */
  resumePending(): number {
    let n = 0;
    for (const d of this.deps.integrations.pendingDeliveries()) {
      const integ = this.deps.integrations.list().find((r) => r.id === d.integrationId);
      if (!integ) continue; // the integration was deleted since: nothing to apply it to
      this.schedule(integ, d.event, d.id, d.payload ?? {});
      n++;
    }
    return n;
  }

  private schedule(integ: GithubIntegrationRecord, event: string, delivery: string, payload: Json): void {
    const p = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.process(integ, event, delivery, payload))
      .then(() => this.deps.integrations.deliveryDone(delivery))
      .catch((err: unknown) => this.deps.log(`github webhook ${delivery} (${event}) failed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** The integration whose WebhookSecret verifies the signature (candidates: the payload's repository; else every one). */
  private async verified(payload: Json, raw: Buffer, signature: string): Promise<GithubIntegrationRecord | null> {
    const repo = str(obj(payload['repository'])['full_name'])?.toLowerCase();
    const all = this.deps.integrations.list();
    const candidates = repo ? all.filter((r) => r.repo.toLowerCase() === repo) : all;
    const verify = await loadVerify();
    const text = raw.toString('utf8');
    for (const rec of candidates) {
      let secret: string;
      try {
        secret = (await this.deps.integrations.credential(rec)).webhookSecret;
      } catch (err) {
        this.deps.log(`github webhook: integration ${rec.id}: ${(err as Error).message}`);
        continue;
      }
      if (await verify(secret, text, signature.toLowerCase())) return rec;
    }
    return null;
  }

  private async process(integ: GithubIntegrationRecord, event: string, delivery: string, p: Json): Promise<void> {
    const action = str(p['action']);
    await this.deps.audit.append({ kind: 'github.webhook', actor: `github:${integ.repo}`, data: { integrationId: integ.id, event, action, delivery } });
    switch (event) {
      case 'pull_request': {
        const pr = obj(p['pull_request']);
        const head = obj(pr['head']);
        const branch = str(head['ref']);
        if (branch && action) await this.deps.pulls?.onPullEvent({ integrationId: integ.id, branch, action, merged: pr['merged'] === true, ...(str(head['sha']) ? { headSha: str(head['sha'])! } : {}) });
        return;
      }
      case 'pull_request_review': {
        const review = obj(p['review']);
        const user = obj(review['user']);
        const branch = str(obj(obj(p['pull_request'])['head'])['ref']);
        if (branch && action === 'submitted') {
          await this.deps.pulls?.onPullEvent({ integrationId: integ.id, branch, action: 'review', review: { state: String(review['state'] ?? ''), by: String(user['login'] ?? 'unknown'), bot: user['type'] === 'Bot' } });
        }
        return;
      }
      case 'workflow_run':
      case 'workflow_job':
      case 'check_suite':
      case 'check_run': {
        const run = obj(p[event]);
        const sha = str(run['head_sha']);
        if (!sha) return;
        const name = str(run['name']) ?? str(obj(run['app'])['name']) ?? event;
        const summary = await this.deps.integrations.recordCi(integ.id, sha, { key: `${event}:${String(run['id'] ?? name)}`, name, kind: event, status: String(run['status'] ?? 'completed'), conclusion: str(run['conclusion']) });
        this.deps.log(`github: CI on ${integ.repo}@${sha.slice(0, 12)}: ${name} ${String(run['status'])}${run['conclusion'] ? `/${String(run['conclusion'])}` : ''} (now ${summary.state})`);
        return;
      }
      default:
        return;
    }
  }
}

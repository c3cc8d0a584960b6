/**
 * The GitHub integration as the host starts it: the secret store, the registrations, the engine's PR
 * flow and incident chain on this host's adapter, review-ai / deploy-ai / coder-ai as the pipeline's
 * agents, and the HTTP routes (registrations, secrets, pulls, the webhook receiver).
 *
 * Environment: CADRE_SECRETS_BACKEND (local | aws), CADRE_SECRET_KEY_FILE (local key, default
 * ~/.config/cadre/secret.key), CADRE_SECRETS_NAMESPACE (default cadre), CADRE_CUSTOMER_ID (default
 * local), AWS_REGION; CADRE_GITHUB_WRITE_SPACING=off drops the one-second pause between GitHub writes
 * (tests against a stand-in only).
 */
import type { Engine } from '../../engine/index';
import { agentSettings } from '../../engine/settings';
import type { AuditTrail, CollectionStore } from '../../engine/ports';
import { PR_COLLECTION, type PrRecord } from '../../engine/pr-flow/ports';
import { PrFlow } from '../../engine/pr-flow/pr-flow';
import { INCIDENT_CHAIN_COLLECTION, PrTriggers, type IncidentChainRecord } from '../../engine/pr-flow/triggers';
import type { RouteDef } from '../../http/route';
import { integrationRoutes } from '../../http/routes/integrations';
import { githubWebhookRoutes } from '../../http/routes/github-webhooks';
import { openSecretStore } from '../../secrets/index';
import type { SecretStore } from '../../secrets/secret-store';
import { GithubIntegrations } from './github-integrations';
import { coderAiFixer, deployAiStaging, reviewAiReviewer } from './pr-pipeline';
import { GithubWebhookReceiver } from './webhooks';

export interface GithubIntegration {
  integrations: GithubIntegrations;
  secrets: SecretStore;
  prFlow: PrFlow;
  triggers: PrTriggers;
  receiver: GithubWebhookReceiver;
  routes: RouteDef[];
  /** Start-up, once the engine resumed its executions: PR requests a stop left halfway go on. */
  resume(): void;
  stop(): void;
}

export function startGithubIntegration(opts: {
  engine: Engine; store: CollectionStore; audit: AuditTrail; dataDir: string; env: NodeJS.ProcessEnv; defaultWorkspace(): string | undefined; log(line: string): void;
}): GithubIntegration {
  const { engine, env } = opts;
  const secrets = openSecretStore(opts.dataDir, env);
  const integrations = new GithubIntegrations({
    store: opts.store, secrets, namespace: env['CADRE_SECRETS_NAMESPACE']?.trim() || 'cadre', customerId: env['CADRE_CUSTOMER_ID']?.trim() || 'local',
    defaultWorkspace: opts.defaultWorkspace, log: opts.log, api: { writeSpacing: env['CADRE_GITHUB_WRITE_SPACING'] !== 'off' },
  });
  const prFlow = new PrFlow({
    bus: engine.bus, acmf: engine.acmf, audit: opts.audit, host: integrations,
    records: opts.store.collection<PrRecord>(PR_COLLECTION),
    once: (...args) => engine.executions.sideEffects.once(...args),
    tenantOfExecution: (id) => engine.executions.tenantOfExecution(id),
    riskContext: (agentId) => {
      const s = agentSettings(engine.config, agentId);
      return { protectedPaths: [...engine.config.defaults.protected_paths], approvalRequiredFor: [...s.approvalRequiredFor] };
    },
    reviewer: reviewAiReviewer(engine, opts.defaultWorkspace),
    deployer: deployAiStaging(engine, opts.defaultWorkspace),
    clock: engine.clock, log: opts.log,
  });
  const triggers = new PrTriggers({
    bus: engine.bus, audit: opts.audit, host: 'github', executions: engine.executions,
    chains: opts.store.collection<IncidentChainRecord>(INCIDENT_CHAIN_COLLECTION), fixer: coderAiFixer(engine, opts.defaultWorkspace),
    clock: engine.clock, log: opts.log,
  });
  const receiver = new GithubWebhookReceiver({ integrations, audit: opts.audit, pulls: prFlow, log: opts.log });
  prFlow.start();
  triggers.start();
  return {
    integrations, secrets, prFlow, triggers, receiver,
    routes: [...integrationRoutes({ github: integrations, secrets, prFlow }), ...githubWebhookRoutes({ receiver })],
    resume: () => {
      const n = prFlow.resume();
      if (n > 0) opts.log(`pull requests: ${n} request(s) a stop left halfway go on`);
      const d = receiver.resumePending();
      if (d > 0) opts.log(`github webhooks: ${d} delivery(ies) answered before a stop are processed now`);
    },
    stop: () => {
      triggers.stop();
      prFlow.stop();
    },
  };
}

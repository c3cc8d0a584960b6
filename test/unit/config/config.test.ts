import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  agentConfigSchema,
  agentSettings,
  cadreConfigSchema,
  DEFAULT_CONFIG,
  DEFAULT_PROTECTED_PATHS,
  interpolate,
  isSecretKey,
  KNOWN_AGENT_IDS,
  loadConfig,
  parseConfig,
  resolveCadreHome,
  type ConfigIssue,
} from '../../../server/src/config';
import { AGENTS } from '../../../server/src/engine/catalog/agents';
import { isEngineError } from '../../../server/src/engine/errors';

const F = '.cadre.yaml';

/** Parses and expects ERR_CONFIG_INVALID; returns the message and the issues. */
function invalid(text: string, env: Record<string, string | undefined> = {}): { message: string; issues: ConfigIssue[] } {
  try {
    parseConfig(text, F, env);
  } catch (err) {
    assert.ok(isEngineError(err), `expected an EngineError, got ${String(err)}`);
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    return { message: err.message, issues: (err.details as { issues: ConfigIssue[] }).issues };
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

/** Joins lines; keeps the indentation readable in tests. */
const y = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('config: defaults', () => {
  it('DEFAULT_CONFIG is the validated empty file, deep-frozen', () => {
    assert.deepEqual(DEFAULT_CONFIG, cadreConfigSchema.parse({}));
    assert.deepEqual(parseConfig('', F, {}), DEFAULT_CONFIG);
    assert.deepEqual(parseConfig('# only a comment\n', F, {}), DEFAULT_CONFIG);
    assert.ok(Object.isFrozen(DEFAULT_CONFIG) && Object.isFrozen(DEFAULT_CONFIG.defaults.server));
    assert.throws(() => {
      (DEFAULT_CONFIG.defaults as { acmf_mode: string }).acmf_mode = 'AUTONOMOUS';
    }, TypeError);
  });

  it('has the documented default values', () => {
    const d = DEFAULT_CONFIG.defaults;
    assert.equal(d.acmf_mode, 'LEARNING');
    assert.deepEqual(d.progression.to_assisted, { success_rate: 0.9, min_tasks: 10, consecutive_success: 5 });
    assert.equal(d.progression.to_autonomous.enabled, false);
    assert.equal(d.intelligence, 'core');
    assert.equal(d.scope, 'mvp');
    assert.deepEqual(d.protected_paths, [...DEFAULT_PROTECTED_PATHS]);
    assert.ok(d.protected_paths.includes('.github/workflows/**') && d.protected_paths.includes('**/*.tf'));
    assert.deepEqual(d.policies, []);
    assert.deepEqual(d.server, { port: 7450, allowed_hosts: [], cors_origins: [] });
    assert.deepEqual(DEFAULT_CONFIG.agents, {});
    for (const name of ['cloud_monitoring', 'incident_management', 'apm', 'tracker', 'chat'] as const) {
      assert.equal(DEFAULT_CONFIG.integrations[name].enabled, false, name);
    }
  });

  it('knows the 25 agent ids, the same as the catalog, in the same order', () => {
    assert.equal(KNOWN_AGENT_IDS.length, 25);
    assert.equal(new Set(KNOWN_AGENT_IDS).size, 25);
    assert.deepEqual([...KNOWN_AGENT_IDS], AGENTS.map((a) => a.id));
  });

  it('an empty value (`key:`) means absent', () => {
    const c = parseConfig(y('agents:', '  coder-ai:', 'integrations:', 'defaults:', '  scope:'), F, {});
    assert.deepEqual(c, DEFAULT_CONFIG);
  });
});

describe('config: a full valid file', () => {
  const text = y(
    'version: 1',
    'agents:',
    '  coder-ai:',
    '    acmf_mode: ASSISTED',
    '    capabilities: [code_generation, refactoring]',
    '    approval_required_for: [production_changes, "src/payments/**"]',
    '    progression:',
    '      to_assisted: { min_tasks: 20 }',
    '      to_autonomous: { enabled: true, success_rate: 0.99 }',
    '  security-ai:',
    '    acmf_mode: OBSERVE',
    'integrations:',
    '  cloud_monitoring:',
    '    enabled: true',
    '    region: ${AWS_REGION}',
    '    credentials:',
    '      access_key_id: ${AWS_ACCESS_KEY_ID}',
    '      secret_access_key: ${AWS_SECRET_ACCESS_KEY}',
    '    metrics: { namespaces: [AWS/EC2, AWS/RDS], period: 60 }',
    '    logs: { groups: ["/aws/lambda/*"] }',
    '    alarms: { sync_existing: true, create_alarms: false, notification_topic: "arn:aws:sns:eu-west-1:1:ops" }',
    '  incident_management:',
    '    enabled: true',
    '    routing_key: ${PD_ROUTING_KEY}',
    '    routing:',
    '      p1: { severity: critical, class: outage }',
    '    dedup_strategy: alert_type',
    '    webhooks:',
    '      enabled: true',
    '      endpoint: https://cadre.example.com/hooks/incidents',
    '      events: [incident.triggered, incident.resolved]',
    '  apm:',
    '    enabled: false',
    '    api_key: ${DD_API_KEY}',
    '    app_key: ${DD_APP_KEY}',
    '    events: { enabled: true, aggregation_key: deploys }',
    '  tracker:',
    '    enabled: true',
    '    base_url: https://acme.atlassian.example',
    '    auth: { account: bot@acme.example, api_token: "${JIRA_TOKEN}" }',
    '    projects: { default: CAD, mapping: { api-server: API, token-service: TOK } }',
    '    webhooks: { endpoint: "https://cadre.example.com/hooks/tracker", events: [issue_created, sprint_closed] }',
    '    templates:',
    '      bug: { project: CAD, issuetype: Bug, priority: High }',
    '  chat:',
    '    enabled: true',
    '    channels: { alerts: "#alerts", approvals: "#approvals" }',
    '    notifications:',
    '      - { type: approval_required, channel: "#approvals", mention: "@oncall" }',
    'defaults:',
    '  acmf_mode: OBSERVE',
    '  intelligence: pro',
    '  scope: production',
    '  protected_paths: [secrets/**]',
    '  policies:',
    '    - id: no-migrations',
    '      description: Schema changes go through the DBA',
    '      deny_paths: ["db/migrations/**"]',
    '    - id: small-changes',
    '      max_changed_lines: 400',
    '  server: { port: 8080, allowed_hosts: [cadre.local, "cadre.local:8080"], cors_origins: ["https://dash.example.com"] }',
  );
  const env = {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 's3cr3t',
    PD_ROUTING_KEY: 'rk',
    JIRA_TOKEN: 'jt',
  };

  it('parses, resolves secrets from the environment and fills defaults', () => {
    const c = parseConfig(text, F, env);
    assert.equal(c.agents['coder-ai']?.acmf_mode, 'ASSISTED');
    assert.deepEqual(c.integrations.cloud_monitoring.credentials, { access_key_id: 'AKIAEXAMPLE', secret_access_key: 's3cr3t' });
    assert.equal(c.integrations.cloud_monitoring.region, 'eu-west-1');
    assert.equal(c.integrations.incident_management.routing_key, 'rk');
    assert.equal(c.integrations.tracker.auth?.api_token, 'jt');
    assert.deepEqual(c.integrations.tracker.projects.mapping, { 'api-server': 'API', 'token-service': 'TOK' });
    // apm is disabled and its variables are unset: the secrets are simply absent.
    assert.equal(c.integrations.apm.api_key, undefined);
    assert.equal(c.integrations.apm.events.aggregation_key, 'deploys');
    assert.equal(c.integrations.chat.notifications[0]?.mention, '@oncall');
    assert.equal(c.defaults.policies.length, 2);
    assert.equal(c.defaults.server.port, 8080);
    assert.deepEqual(c.defaults.progression.to_assisted, { success_rate: 0.9, min_tasks: 10, consecutive_success: 5 });
  });

  it('agentSettings: the agent section over the defaults, thresholds merged key by key', () => {
    const c = parseConfig(text, F, env);
    const coder = agentSettings(c, 'coder-ai');
    assert.equal(coder.acmfMode, 'ASSISTED');
    assert.deepEqual(coder.capabilities, ['code_generation', 'refactoring']);
    assert.deepEqual(coder.approvalRequiredFor, ['production_changes', 'src/payments/**']);
    assert.deepEqual(coder.progression.toAssisted, { successRate: 0.9, minTasks: 20, consecutiveSuccess: 5 });
    assert.deepEqual(coder.progression.toAutonomous, { enabled: true, successRate: 0.99, minTasks: 50, consecutiveSuccess: 20 });
    const sec = agentSettings(c, 'security-ai');
    assert.equal(sec.acmfMode, 'OBSERVE');
    assert.equal(sec.capabilities, null);
    assert.deepEqual(sec.approvalRequiredFor, ['production_changes', 'security_sensitive']);
    assert.equal(sec.progression.toAutonomous.enabled, false);
    const tester = agentSettings(c, 'tester-ai');
    assert.equal(tester.acmfMode, 'OBSERVE', 'defaults.acmf_mode of the file');
    assert.equal(agentSettings(DEFAULT_CONFIG, 'coder-ai').acmfMode, 'LEARNING');
  });
});

describe('config: errors name file, line, column and key path', () => {
  it('wrong enum value', () => {
    const { message, issues } = invalid(y(
      '# agents',
      'agents:',
      '  coder-ai:',
      '    acmf_mode: AUTO',
    ));
    assert.equal(message, '.cadre.yaml:4:5: agents.coder-ai.acmf_mode: must be one of OBSERVE, LEARNING, ASSISTED, AUTONOMOUS (got "AUTO")');
    assert.deepEqual(
      { line: issues[0]!.line, col: issues[0]!.col, endLine: issues[0]!.endLine, endCol: issues[0]!.endCol, path: issues[0]!.path },
      { line: 4, col: 5, endLine: 4, endCol: 20, path: 'agents.coder-ai.acmf_mode' },
    );
  });

  it('wrong type and out-of-range numbers', () => {
    const { message } = invalid(y(
      'agents:',
      '  planner-ai:',
      '    capabilities: planning',
      '    progression:',
      '      to_assisted:',
      '        success_rate: 1.5',
      '        min_tasks: ten',
      'defaults:',
      '  server:',
      '    port: 70000',
    ));
    assert.equal(message, [
      '.cadre.yaml:3:5: agents.planner-ai.capabilities: must be a list (got "planning")',
      '.cadre.yaml:6:9: agents.planner-ai.progression.to_assisted.success_rate: must be <= 1 (got 1.5)',
      '.cadre.yaml:7:9: agents.planner-ai.progression.to_assisted.min_tasks: must be a number (got "ten")',
      '.cadre.yaml:10:5: defaults.server.port: must be <= 65535 (got 70000)',
    ].join('\n'));
  });

  it('unknown key, with a suggestion', () => {
    const { message } = invalid(y(
      'defaults:',
      '  acmf_mode: LEARNING',
      '  protected_path: [a]',
      'integration:',
      '  chat: {}',
    ));
    assert.equal(message, [
      '.cadre.yaml:3:3: defaults.protected_path: unknown key "protected_path" (did you mean "protected_paths"?)',
      '.cadre.yaml:4:1: integration: unknown key "integration" (did you mean "integrations"?)',
    ].join('\n'));
  });

  it('unknown key inside a flow mapping and inside a list item', () => {
    const { message } = invalid(y(
      'integrations:',
      '  chat:',
      '    notifications:',
      '      - type: alert_critical',
      '        channel: "#ops"',
      '        mentoin: "@here"',
      '  tracker: { enabled: false, projekts: {} }',
    ));
    assert.equal(message, [
      '.cadre.yaml:6:9: integrations.chat.notifications[0].mentoin: unknown key "mentoin" (did you mean "mention"?)',
      '.cadre.yaml:7:30: integrations.tracker.projekts: unknown key "projekts" (did you mean "projects"?)',
    ].join('\n'));
  });

  it('free-form maps accept any key', () => {
    const c = parseConfig(y(
      'integrations:',
      '  tracker:',
      '    projects:',
      '      mapping: { anything-goes: X, "with space": Y }',
      '    templates:',
      '      incident: { project: OPS }',
      '  incident_management:',
      '    routing:',
      '      sev-whatever: { severity: warning }',
    ), F, {});
    assert.deepEqual(c.integrations.tracker.projects.mapping, { 'anything-goes': 'X', 'with space': 'Y' });
    assert.equal(c.integrations.incident_management.routing['sev-whatever']?.severity, 'warning');
  });

  it('unknown agent id', () => {
    const { message } = invalid(y(
      'agents:',
      '  coder-ai: { acmf_mode: LEARNING }',
      '  coder:',
      '    acmf_mode: LEARNING',
      '  orchestrator-ai: { acmf_mode: OBSERVE }',
    ));
    const lines = message.split('\n');
    assert.equal(lines[0], '.cadre.yaml:3:3: agents.coder: unknown agent id "coder" (did you mean "coder-ai"?)');
    assert.match(lines[1]!, /^\.cadre\.yaml:5:3: agents\.orchestrator-ai: unknown agent id "orchestrator-ai" \(known ids: req-ai, planner-ai, .*success-ai\)$/);
  });

  it('inline secret', () => {
    const { message } = invalid(y(
      'integrations:',
      '  apm:',
      '    enabled: false',
      '    api_key: 0123456789abcdef',
      '    app_key: ${DD_APP_KEY}',
      '  tracker:',
      '    auth:',
      '      api_token: "Bearer ${TOKEN}"',
      '  cloud_monitoring:',
      '    credentials: { access_key_id: 12345 }',
    ), { DD_APP_KEY: 'x', TOKEN: 'y' });
    assert.equal(message, [
      '.cadre.yaml:4:5: integrations.apm.api_key: secret values must come from the environment: write ${VAR}',
      '.cadre.yaml:8:7: integrations.tracker.auth.api_token: secret values must come from the environment: write ${VAR}',
      '.cadre.yaml:10:20: integrations.cloud_monitoring.credentials.access_key_id: secret values must come from the environment: write ${VAR}',
    ].join('\n'));
  });

  it('unset variable: an error for an enabled integration, absent for a disabled one', () => {
    const text = (enabled: boolean) => y(
      'integrations:',
      '  incident_management:',
      `    enabled: ${enabled}`,
      '    routing_key: ${PD_ROUTING_KEY}',
    );
    const { message } = invalid(text(true));
    assert.equal(message, '.cadre.yaml:4:5: integrations.incident_management.routing_key: environment variable PD_ROUTING_KEY is not set (integration "incident_management" is enabled)');
    assert.equal(parseConfig(text(false), F, {}).integrations.incident_management.routing_key, undefined);
    assert.equal(parseConfig(text(true), F, { PD_ROUTING_KEY: 'abc' }).integrations.incident_management.routing_key, 'abc');
  });

  it('an enabled integration needs its essential keys', () => {
    const { message } = invalid(y(
      'integrations:',
      '  tracker:',
      '    enabled: true',
      '    base_url: https://t.example',
    ));
    assert.equal(message, '.cadre.yaml:2:3: integrations.tracker.auth.api_token: is required when the integration is enabled');
  });

  it('unset variable outside integrations is always an error', () => {
    const { message } = invalid(y('defaults:', '  scope: ${CADRE_SCOPE}'));
    assert.equal(message, '.cadre.yaml:2:3: defaults.scope: environment variable CADRE_SCOPE is not set');
  });

  it('YAML syntax error', () => {
    const { message, issues } = invalid(y(
      'agents:',
      '  coder-ai:',
      '    acmf_mode: [LEARNING',
      'defaults: {}',
    ));
    // The parser notices the unclosed flow sequence where the next block entry starts.
    assert.equal(message, '.cadre.yaml:4:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]');
    assert.equal(issues.length, 1, 'only the first syntax error: later ones are its consequences');
    assert.equal(invalid('a: b: c\n').message, '.cadre.yaml:1:4: YAML syntax error: Nested mappings are not allowed in compact mappings');
  });

  it('YAML syntax error: tab indentation, duplicate key', () => {
    assert.equal(invalid('defaults:\n  scope: mvp\n  scope: poc\n').message, '.cadre.yaml:3:3: YAML syntax error: Map keys must be unique');
    assert.match(invalid('defaults:\n\tscope: mvp\n').message, /^\.cadre\.yaml:2:1: YAML syntax error: /);
  });

  it('anchors and aliases work; merge keys are unknown keys', () => {
    const c = parseConfig(y(
      'agents:',
      '  coder-ai: &strict { acmf_mode: OBSERVE, approval_required_for: [production_changes] }',
      '  deploy-ai: *strict',
    ), F, {});
    assert.equal(agentSettings(c, 'deploy-ai').acmfMode, 'OBSERVE');
    assert.match(invalid(y('agents:', '  coder-ai: &a { acmf_mode: OBSERVE }', '  tester-ai:', '    <<: *a')).message,
      /^\.cadre\.yaml:4:5: agents\.tester-ai\.<<: unknown key "<<"/);
  });

  it('a file that is not a mapping', () => {
    assert.equal(invalid('- a\n- b\n').message, '.cadre.yaml:1:1: the configuration must be a mapping of sections (agents, integrations, defaults)');
  });

  it('policies: shape and unique ids', () => {
    const { message } = invalid(y(
      'defaults:',
      '  policies:',
      '    - id: ok',
      '      deny_paths: [a/**]',
      '    - id: empty',
      '    - id: ok',
      '      max_changed_lines: 0',
    ));
    assert.equal(message, [
      '.cadre.yaml:5:7: defaults.policies[1]: a policy needs deny_paths and/or max_changed_lines',
      '.cadre.yaml:6:7: defaults.policies[2].id: duplicate policy id "ok"',
      '.cadre.yaml:7:7: defaults.policies[2].max_changed_lines: must be >= 1 (got 0)',
    ].join('\n'));
    assert.equal(
      invalid(y('defaults:', '  policies:', '    - { id: a, deny_paths: [x] }', '    - { id: a, deny_paths: [y] }')).message,
      '.cadre.yaml:4:9: defaults.policies[1].id: duplicate policy id "a"',
    );
  });

  it('server: hosts and CORS origins', () => {
    const { message } = invalid(y(
      'defaults:',
      '  server:',
      '    allowed_hosts: ["http://x"]',
      '    cors_origins: ["*", "https://a.example/"]',
    ));
    const lines = message.split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^\.cadre\.yaml:3:21: defaults\.server\.allowed_hosts\[0\]: must be a host name/);
    assert.match(lines[1]!, /^\.cadre\.yaml:4:20: defaults\.server\.cors_origins\[0\]: must be an origin/);
    assert.match(lines[2]!, /^\.cadre\.yaml:4:25: defaults\.server\.cors_origins\[1\]: must be an origin/);
  });

  it('reports every problem at once, sorted by position, with details for editors', () => {
    const { issues } = invalid(y(
      'defaults:',
      '  scope: big',
      'agents:',
      '  coder-ai: { acmf_mode: auto }',
    ));
    assert.deepEqual(issues.map((i) => [i.line, i.col, i.path]), [[2, 3, 'defaults.scope'], [4, 15, 'agents.coder-ai.acmf_mode']]);
    assert.ok(issues.every((i) => i.file === F));
  });
});

describe('config: environment interpolation', () => {
  it('interpolates ${VAR} in any string, with fallback and escape', () => {
    const c = parseConfig(y(
      'defaults:',
      '  protected_paths: ["${TEAM}/infra/**", "$${LITERAL}", "${MISSING:-fallback}/**"]',
      '  scope: ${SCOPE}',
      'integrations:',
      '  chat:',
      '    channels: { alerts: "#${TEAM}-alerts" }',
    ), F, { TEAM: 'core', SCOPE: 'production' });
    assert.deepEqual(c.defaults.protected_paths, ['core/infra/**', '${LITERAL}', 'fallback/**']);
    assert.equal(c.defaults.scope, 'production');
    assert.equal(c.integrations.chat.channels.alerts, '#core-alerts');
  });

  it('a plain whole reference becomes a number or boolean; a quoted one stays a string', () => {
    const text = y('defaults:', '  server:', '    port: ${PORT}', 'integrations:', '  chat:', '    enabled: ${CHAT}');
    const c = parseConfig(text, F, { PORT: '9001', CHAT: 'true' });
    assert.equal(c.defaults.server.port, 9001);
    assert.equal(c.integrations.chat.enabled, true);
    assert.equal(
      invalid(y('defaults:', '  server:', '    port: "${PORT}"'), { PORT: '9001' }).message,
      '.cadre.yaml:3:5: defaults.server.port: must be a number (got "9001")',
    );
  });

  it('secrets stay strings and take no fallback', () => {
    const c = parseConfig(y('integrations:', '  apm:', '    enabled: true', '    api_key: ${K}'), F, { K: '12345' });
    assert.equal(c.integrations.apm.api_key, '12345');
    assert.match(invalid(y('integrations:', '  apm:', '    api_key: ${K:-abc}')).message, /secret values must come from the environment/);
  });

  it('interpolate() and isSecretKey()', () => {
    assert.deepEqual(interpolate('a${X}b${Y:-y}c$${Z}', { X: '1' }), { value: 'a1byc${Z}', missing: [], invalid: [] });
    assert.deepEqual(interpolate('${A}${B}', {}).missing, ['A', 'B']);
    assert.deepEqual(interpolate('${1A}', {}).invalid, ['${1A}']);
    for (const k of ['api_key', 'app_key', 'routing_key', 'access_key_id', 'secret_access_key', 'api_token', 'password', 'webhook_secret', 'apikey', 'headers']) {
      assert.ok(isSecretKey(k), k);
    }
    for (const k of ['aggregation_key', 'enabled', 'base_url', 'account', 'region', 'service_name', 'dedup_strategy']) {
      assert.ok(!isSecretKey(k), k);
    }
  });
});

describe('config: loadConfig file lookup', () => {
  let root: string;
  let ws: string;
  let home: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'cadre-config-'));
    ws = path.join(root, 'ws');
    home = path.join(root, 'home');
    await mkdir(ws);
    await mkdir(home);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('no file anywhere: the defaults, source null', async () => {
    const r = await loadConfig({ workspaceDir: ws, cadreHome: home, env: {} });
    assert.equal(r.source, null);
    assert.equal(r.config, DEFAULT_CONFIG);
    const r2 = await loadConfig({ cadreHome: path.join(root, 'does-not-exist'), env: {} });
    assert.equal(r2.source, null);
  });

  it('the CADRE_HOME file when the workspace has none', async () => {
    await writeFile(path.join(home, 'config.yaml'), 'defaults:\n  scope: poc\n');
    const r = await loadConfig({ workspaceDir: ws, cadreHome: home, env: {} });
    assert.equal(r.source, path.join(home, 'config.yaml'));
    assert.equal(r.config.defaults.scope, 'poc');
  });

  it('the workspace .cadre.yaml wins over CADRE_HOME (no merging)', async () => {
    await writeFile(path.join(home, 'config.yaml'), 'defaults:\n  scope: poc\n  intelligence: ultra\n');
    await writeFile(path.join(ws, '.cadre.yaml'), 'defaults:\n  scope: production\n');
    const r = await loadConfig({ workspaceDir: ws, cadreHome: home, env: {} });
    assert.equal(r.source, path.join(ws, '.cadre.yaml'));
    assert.equal(r.config.defaults.scope, 'production');
    assert.equal(r.config.defaults.intelligence, 'core');
  });

  it('an invalid workspace file is an error naming its path (no fallback to the next file)', async () => {
    await writeFile(path.join(home, 'config.yaml'), 'defaults:\n  scope: poc\n');
    const file = path.join(ws, '.cadre.yaml');
    await writeFile(file, 'defaults:\n  scope: huge\n');
    await assert.rejects(loadConfig({ workspaceDir: ws, cadreHome: home, env: {} }), (err: unknown) => {
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_CONFIG_INVALID');
      assert.equal(err.message, `${file}:2:3: defaults.scope: must be one of demo, poc, mvp, product, production (got "huge")`);
      return true;
    });
  });

  it('passes env to interpolation', async () => {
    await writeFile(path.join(ws, '.cadre.yaml'), 'defaults:\n  server:\n    port: ${CADRE_PORT}\n');
    const r = await loadConfig({ workspaceDir: ws, cadreHome: home, env: { CADRE_PORT: '7777' } });
    assert.equal(r.config.defaults.server.port, 7777);
  });

  it('resolveCadreHome: $CADRE_HOME, else ~/.cadre', () => {
    assert.equal(resolveCadreHome({ CADRE_HOME: '/srv/cadre' }, '/home/u'), path.resolve('/srv/cadre'));
    assert.equal(resolveCadreHome({}, '/home/u'), path.join('/home/u', '.cadre'));
    assert.equal(resolveCadreHome({ CADRE_HOME: '' }, '/home/u'), path.join('/home/u', '.cadre'));
  });
});

describe('config: docs/configuration.md stays in step with the schema', () => {
  const doc = readFileSync(path.join(__dirname, '../../../docs/configuration.md'), 'utf8');

  /** Leaf key paths of a zod schema, with `<key>` for free-form maps and `[]` for lists of objects. */
  function leafPaths(schema: unknown, prefix: string): string[] {
    type Def = { type: string; innerType?: unknown; in?: unknown; shape?: Record<string, unknown>; valueType?: unknown; element?: unknown };
    let s = schema;
    let d = (s as { _zod: { def: Def } })._zod.def;
    while (d.innerType || d.type === 'pipe') {
      s = d.innerType ?? d.in;
      d = (s as { _zod: { def: Def } })._zod.def;
    }
    if (d.type === 'object') {
      return Object.entries(d.shape!).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
    }
    if (d.type === 'record') {
      const v = (d.valueType as { _zod: { def: Def } })._zod.def;
      return v.type === 'object' ? leafPaths(d.valueType, `${prefix}.<key>`) : [prefix];
    }
    if (d.type === 'array') {
      const el = (d.element as { _zod: { def: Def } })._zod.def;
      if (el.type === 'object') return leafPaths(d.element, `${prefix}[]`);
    }
    return [prefix];
  }

  it('documents every key', () => {
    const shape = (cadreConfigSchema as unknown as { shape: Record<string, unknown> }).shape;
    const missing: string[] = [];
    const check = (rel: string, full: string) => {
      const pattern = rel.replace(/[.[\]]/g, (c) => `\\${c}`).replace('<key>', '<[a-z]+>');
      if (!new RegExp(`\`${pattern}\``).test(doc)) missing.push(full);
    };
    for (const p of leafPaths(shape['defaults'], '')) check(p.replace(/^policies\[\]\./, ''), `defaults.${p}`);
    for (const p of leafPaths(agentConfigSchema, '')) check(p, `agents.<id>.${p}`);
    const integrations = (shape['integrations'] as { _zod: { def: { innerType: { shape: Record<string, unknown> } } } })._zod.def.innerType.shape;
    for (const [name, s] of Object.entries(integrations)) {
      assert.ok(doc.includes(`### \`integrations.${name}\``), name);
      for (const p of leafPaths(s, '')) check(p, `integrations.${name}.${p}`);
    }
    assert.ok(doc.includes('## `llm` (Cadre extension)'));
    for (const p of leafPaths(shape['llm'], '')) check(`llm.${p}`, `llm.${p}`);
    assert.deepEqual(missing, []);
  });

  it('the example file is valid', () => {
    const example = /## Example\n\n```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(example);
    const env = {
      AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', PAGERDUTY_ROUTING_KEY: 'c', JIRA_API_TOKEN: 'd',
      PAGERDUTY_WEBHOOK_SECRET: 'e', JIRA_WEBHOOK_SECRET: 'f',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318',
    };
    const c = parseConfig(example, 'configuration.md', env);
    assert.equal(c.defaults.server.port, 7450);
    assert.equal(c.integrations.apm.api_key, undefined);
    assert.equal(agentSettings(c, 'coder-ai').progression.toAssisted.minTasks, 20);
  });
});

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SkillContext, StepSummary } from '../../../../server/src/engine/rigor/skill';
import { skills } from '../../../../server/src/skills/builtin';
import {
  buildPlan, deploymentFacts, deploySkill, findDeployCommand, loopbackUrl, parseDeployInput, planSkill, redactOutput, type DeployData, type PlanData,
} from '../../../../server/src/skills/deploy/index';
import { createHarness, type Harness } from '../../../support/engine-harness';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/deploy');
const dirs: string[] = [];

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }).trim();
}

/** A copy of a fixture app committed in a fresh git repository. */
function app(name: 'node-app' | 'k8s-app' | 'bare-app'): string {
  const dir = mkdtempSync(path.join(tmpdir(), `cadre-deploy-${name}-`));
  dirs.push(dir);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  sh(dir, 'init', '-q', '-b', 'main');
  sh(dir, 'config', 'user.email', 't@example.com');
  sh(dir, 'config', 'user.name', 'T');
  sh(dir, 'config', 'commit.gpgsign', 'false');
  sh(dir, 'add', '.');
  sh(dir, 'commit', '-q', '-m', 'app');
  return dir;
}

const markers = (dir: string) => (existsSync(path.join(dir, '.deploy-marker')) ? readFileSync(path.join(dir, '.deploy-marker'), 'utf8').split('\n').filter(Boolean) : []);

function ctx(action: 'plan' | 'deploy', workspace: string, input: Record<string, unknown> = {}, previous: StepSummary[] = [], allowed: (k: string) => boolean = () => true): SkillContext {
  const c = skillContext({ agentId: 'deploy-ai', action, workspace, input, allowed });
  c.request.previous = previous;
  return c;
}

describe('deploy-ai plan and deploy', function () {
  this.timeout(30_000);
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('both are embedded skills of deploy-ai', () => {
    assert.ok(skills.includes(planSkill) && skills.includes(deploySkill));
    assert.deepEqual([planSkill.agentId, planSkill.action, deploySkill.agentId, deploySkill.action], ['deploy-ai', 'plan', 'deploy-ai', 'deploy']);
  });

  describe('deployment facts', () => {
    it('node app: scripts, Dockerfile EXPOSE and HEALTHCHECK, the health route (not the client call), each with file and line', () => {
      const f = deploymentFacts(app('node-app'));
      const scripts = Object.fromEntries(f.scripts.map((s) => [s.name, `${s.file}:${s.line}`]));
      assert.deepEqual(scripts, { build: 'package.json:6', start: 'package.json:7', 'deploy:staging': 'package.json:9', 'deploy:broken': 'package.json:10', deploy: 'package.json:11' });
      assert.equal(f.dockerfiles.length, 1);
      assert.deepEqual(f.dockerfiles[0]!.expose, [8080]);
      assert.equal(f.dockerfiles[0]!.line, 4);
      assert.equal(f.dockerfiles[0]!.healthcheck?.line, 5);
      assert.match(f.dockerfiles[0]!.healthcheck!.command, /CMD wget -qO- http:\/\/127\.0\.0\.1:8080\/healthz/);
      assert.deepEqual(f.healthRoutes.map((h) => `${h.file}:${h.line} ${h.path}`), ['src/server.js:5 /healthz'], 'fetch(base + \'/ready\') in a client is not a route');
    });

    it('k8s app: the Deployment with replicas, strategy and both httpGet probes, parsed with their lines; the manifests folder', () => {
      const f = deploymentFacts(app('k8s-app'));
      assert.equal(f.k8s.length, 1, 'the Service is not a Deployment');
      const d = f.k8s[0]!;
      assert.deepEqual([d.name, d.replicas, d.strategy, d.file, d.line], ['users-svc', 4, 'RollingUpdate', 'k8s/deployment.yaml', 2]);
      assert.deepEqual(d.rollingUpdate, { maxSurge: '1', maxUnavailable: '0' });
      assert.deepEqual(d.probes.map((p) => `${p.type} ${p.how} ${p.path} ${p.port} ${p.file}:${p.line}`), [
        'readiness httpGet /ready 3000 k8s/deployment.yaml:25',
        'liveness httpGet /livez 3000 k8s/deployment.yaml:30',
      ]);
      assert.deepEqual(f.k8sDirs, ['k8s']);
      assert.deepEqual(f.healthRoutes.map((h) => `${h.file}:${h.line} ${h.path}`), ['src/index.js:4 /ready']);
    });

    it('never reads a manifest through a symlink that leads outside the workspace', () => {
      const ws = app('bare-app');
      const outside = mkdtempSync(path.join(tmpdir(), 'cadre-deploy-outside-'));
      dirs.push(outside);
      writeFileSync(path.join(outside, 'deployment.yaml'), readFileSync(path.join(FIXTURES, 'k8s-app/k8s/deployment.yaml')));
      symlinkSync(path.join(outside, 'deployment.yaml'), path.join(ws, 'deployment.yaml'));
      const f = deploymentFacts(ws);
      assert.deepEqual(f.k8s, []);
      assert.ok(f.refused.some((r) => /deployment\.yaml: outside the workspace/.test(r)), f.refused.join('; '));
    });
  });

  describe('the deploy command', () => {
    it('deploy:<env> first, then deploy; kubectl only when on PATH; else none, naming what to add', () => {
      const node = deploymentFacts(app('node-app'));
      assert.equal(findDeployCommand(node, 'staging').command?.command, 'npm run --silent deploy:staging');
      assert.equal(findDeployCommand(node, 'production').command?.command, 'npm run --silent deploy');
      const k8s = deploymentFacts(app('k8s-app'));
      assert.equal(findDeployCommand(k8s, 'staging', { kubectl: '/usr/local/bin/kubectl' }).command?.command, 'kubectl apply -f k8s');
      assert.match(findDeployCommand(k8s, 'staging', { kubectl: null }).missing ?? '', /kubectl is not on PATH/);
      assert.equal(findDeployCommand(deploymentFacts(app('bare-app')), 'staging').missing,
        'no deploy command for staging: add a "deploy:staging" or "deploy" script to package.json (or Kubernetes manifests with kubectl on PATH)');
    });

    it('input: canary and staging by default; blue-green accepted; an unknown strategy or a bad environment name is refused', () => {
      assert.deepEqual(parseDeployInput({}), { ok: true, strategy: 'canary', environment: 'staging', production: false });
      assert.deepEqual(parseDeployInput({ strategy: 'Blue_Green', environment: 'production' }), { ok: true, strategy: 'blue-green', environment: 'production', production: true });
      assert.equal((parseDeployInput({ strategy: 'yolo' }) as { field: string }).field, 'strategy');
      assert.equal((parseDeployInput({ environment: '../prod; rm -rf' }) as { field: string }).field, 'environment');
    });
  });

  describe('plan', () => {
    it('canary on the node app: pre-flight, build, 10% → 50% → 100% with bake times, the health checks, numbered rollback conditions; confident', async () => {
      const ws = app('node-app');
      const { proposed, artifact } = await runSkill(planSkill, ctx('plan', ws));
      assert.ok(proposed.every((a) => ['read', 'git_status'].includes(a.kind)), 'the plan proposes only reads');
      const d = artifact.data as PlanData;
      assert.deepEqual(d.steps.map((s) => s.name), ['Pre-flight', 'Build', 'Deploy the canary at 10%', 'Promote the canary to 50%', 'Promote to 100%', 'Verify']);
      assert.deepEqual(d.steps.filter((s) => s.trafficPercent).map((s) => [s.trafficPercent, s.bakeMinutes]), [[10, 5], [50, 5], [100, 5]]);
      assert.deepEqual(d.healthChecks.map((h) => `${h.file}:${h.line}`), ['Dockerfile:5', 'src/server.js:5']);
      assert.equal(d.noHealthEndpoint, null);
      assert.deepEqual(d.rollbackConditions.map((c) => c.metric), ['HTTP 5xx rate', 'p95 latency', 'health check']);
      assert.match(d.rollbackConditions[0]!.condition, /\+ 1 percentage point/);
      assert.match(d.rollbackConditions[1]!.condition, /1\.25x/);
      assert.match(d.rollbackConditions[2]!.condition, /3 consecutive/);
      assert.equal(d.deployCommand?.command, 'npm run --silent deploy:staging');
      assert.equal(d.target?.commit, sh(ws, 'rev-parse', 'HEAD'));
      assert.ok(artifact.confidence >= 0.75, `a plan with a deploy command and a health check is confident: ${artifact.confidence}`);
      assert.match(artifact.text ?? '', /## Automatic rollback when[\s\S]*p95 latency: above 1\.25x the baseline, for 5 minutes/);
      assert.match(artifact.summary, /health checks: .*\/healthz/);
    });

    it('blue-green for production on the k8s app: green, health-check green, switch, keep blue; kubectl rollout undo; probes as checks', async () => {
      const { artifact } = await runSkill(planSkill, ctx('plan', app('k8s-app'), { strategy: 'blue-green', environment: 'production' }));
      const d = artifact.data as PlanData;
      assert.deepEqual(d.steps.map((s) => s.name), ['Pre-flight', 'Build', 'Deploy green', 'Health-check green', 'Switch traffic to green', 'Keep blue for the rollback window', 'Verify']);
      assert.equal(d.steps.find((s) => s.name === 'Keep blue for the rollback window')!.bakeMinutes, 60);
      assert.deepEqual(d.healthChecks.map((h) => h.source), ['Kubernetes readinessProbe of users-svc', 'Kubernetes livenessProbe of users-svc', 'health route in the sources']);
      assert.match(d.rollback.procedure, /^switch the traffic back to blue/);
      assert.deepEqual(d.rollback.commands, ['kubectl rollout undo deployment/users-svc']);
      assert.ok(d.rollbackConditions.some((c) => c.metric === 'pod restarts'));
    });

    it('an app with nothing deployable: the plan is not applicable, naming what to add (never a weak plan that fails its own gate)', async () => {
      const { artifact } = await runSkill(planSkill, ctx('plan', app('bare-app')));
      const d = artifact.data as PlanData;
      assert.deepEqual(d.healthChecks, []);
      assert.match(d.noHealthEndpoint ?? '', /^no health endpoint found/);
      assert.equal(d.deployCommand, null);
      assert.match(artifact.notApplicable ?? '', /nothing deployable found in the workspace.*add a "deploy:staging" or "deploy" script/);
      assert.ok(!d.rollbackConditions.some((c) => c.metric === 'health check'), 'no health-check condition without a health check');
    });

    it('a deployable app without a deploy command or health route still gets a confident plan with the gaps named', async () => {
      const ws = app('bare-app');
      const pkg = JSON.parse(readFileSync(path.join(ws, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      pkg.scripts['start'] = 'node index.js';
      writeFileSync(path.join(ws, 'package.json'), JSON.stringify(pkg));
      const { artifact } = await runSkill(planSkill, ctx('plan', ws));
      assert.equal(artifact.notApplicable, undefined);
      assert.ok(artifact.confidence >= 0.7, `calibrated on read facts: ${artifact.confidence}`);
      assert.match(artifact.summary, /no health endpoint found; no deploy command/);
    });

    it('names failing readiness checks of an earlier step as blockers, and deploys coder-ai\'s branch when there is one', async () => {
      const ws = app('node-app');
      const base = sh(ws, 'rev-parse', 'HEAD');
      sh(ws, 'checkout', '-q', '-b', 'cadre/coder-abc');
      writeFileSync(path.join(ws, 'src/extra.js'), 'module.exports = 1;\n');
      sh(ws, 'add', '.');
      sh(ws, 'commit', '-q', '-m', 'extra');
      const commit = sh(ws, 'rev-parse', 'HEAD');
      sh(ws, 'checkout', '-q', 'main');
      const previous: StepSummary[] = [
        { step: 0, agentId: 'coder-ai', action: 'generate', passed: true, confidence: 0.8, summary: '', data: { mode: 'branch', branch: 'cadre/coder-abc', commit, base } },
        { step: 1, agentId: 'deploy-ai', action: 'readiness', passed: true, confidence: 0.8, summary: '', data: { checks: [
          { id: 'clean-tree', title: 'Clean working tree', status: 'pass', evidence: 'clean' },
          { id: 'tests', title: 'Tests pass', status: 'fail', evidence: 'tester-ai test e9 (failed): 3 passed, 1 failed' },
          { id: 'coverage', title: 'Coverage', status: 'unknown', evidence: 'no coverage report' },
        ] } },
      ];
      const { artifact } = await runSkill(planSkill, ctx('plan', ws, {}, previous));
      const d = artifact.data as PlanData;
      assert.deepEqual(d.preflight.blockers.map((b) => b.id), ['tests']);
      assert.deepEqual(d.preflight.unknown.map((b) => b.id), ['coverage']);
      assert.match(d.steps[0]!.detail, /resolve the 1 failing readiness check\(s\) of step 1 first: Tests pass/);
      assert.deepEqual([d.target?.branch, d.target?.commit, d.rollback.previousCommit], ['cadre/coder-abc', commit, base]);
      assert.match(artifact.summary, new RegExp(`deploys coder-ai's branch cadre/coder-abc at ${commit.slice(0, 12)}`));
      assert.match(artifact.text ?? '', /## Blockers \(from readiness\)\n\n- ✗ Tests pass/);
    });

    it('buildPlan is pure: the same facts give the same plan', () => {
      const f = deploymentFacts(app('node-app'));
      const p = { strategy: 'canary' as const, environment: 'staging', production: false, facts: f, command: null, missingCommand: 'x', target: null };
      assert.deepEqual(buildPlan(p), buildPlan(p));
    });
  });

  describe('deploy', () => {
    it('proposes deploy_staging for staging and deploy_production for production; only reads when there is no command', async () => {
      const ws = app('node-app');
      const kinds = async (input: Record<string, unknown>, dir = ws) => {
        const c = ctx('deploy', dir, input);
        return (await deploySkill.propose(c, await deploySkill.research(c))).map((a) => a.kind);
      };
      assert.deepEqual(await kinds({}), ['read', 'deploy_staging']);
      assert.deepEqual(await kinds({ environment: 'production' }), ['read', 'deploy_production']);
      assert.deepEqual(await kinds({ environment: 'qa', healthUrl: 'http://127.0.0.1:9/health' }), ['read', 'deploy_staging', 'http_request']);
      assert.deepEqual(await kinds({ healthUrl: 'http://example.com/health' }), ['read', 'deploy_staging'], 'no health check off the machine');
      assert.deepEqual(await kinds({}, app('bare-app')), ['read']);
      assert.equal(markers(ws).length, 0, 'proposing runs nothing');
    });

    it('not applicable with no deploy command, naming what to add', async () => {
      const { artifact } = await runSkill(deploySkill, ctx('deploy', app('bare-app')));
      assert.equal(artifact.notApplicable, 'no deploy command for staging: add a "deploy:staging" or "deploy" script to package.json (or Kubernetes manifests with kubectl on PATH)');
      assert.equal(artifact.actionsTaken, undefined);
    });

    it('runs nothing when ACMF does not allow the deploy kind', async () => {
      const ws = app('node-app');
      const { artifact } = await runSkill(deploySkill, ctx('deploy', ws, {}, [], (k) => k === 'read'));
      assert.match(artifact.unable ?? '', /deploy_staging: npm run --silent deploy:staging\) was not allowed by ACMF; nothing was run/);
      assert.equal(markers(ws).length, 0);
    });

    it('a failing deploy command is reported as a failure with the output tail, the credential line redacted', async () => {
      const ws = app('node-app');
      const { artifact } = await runSkill(deploySkill, ctx('deploy', ws, { environment: 'broken' }));
      assert.match(artifact.unable ?? '', /failed with exit code 3; output tail:/);
      assert.match(artifact.unable ?? '', /the staging cluster refused the bundle/);
      assert.match(artifact.unable ?? '', /\[line redacted: aws-access-key-id\]/);
      assert.doesNotMatch(`${artifact.unable}\n${artifact.text}`, /AKIA/);
      assert.equal((artifact.data as DeployData).run?.exitCode, 3);
    });

    it('after coder-ai committed on a branch: deploys that commit from a temporary worktree, leaving the user\'s checkout as it was', async () => {
      const ws = app('node-app');
      const base = sh(ws, 'rev-parse', 'HEAD');
      sh(ws, 'checkout', '-q', '-b', 'cadre/coder-dep');
      writeFileSync(path.join(ws, 'scripts/deploy.js'), "'use strict';\nconsole.log('deployed from coder-ai\\'s commit to ' + process.env.DEPLOY_ENVIRONMENT);\n");
      sh(ws, 'commit', '-q', '-am', 'coder change');
      const commit = sh(ws, 'rev-parse', 'HEAD');
      sh(ws, 'checkout', '-q', 'main');
      const previous: StepSummary[] = [{ step: 0, agentId: 'coder-ai', action: 'generate', passed: true, confidence: 0.8, summary: '', data: { mode: 'branch', branch: 'cadre/coder-dep', commit, base } }];
      const { proposed, artifact } = await runSkill(deploySkill, ctx('deploy', ws, {}, previous));
      assert.match(proposed.find((a) => a.kind === 'deploy_staging')!.description, /on coder-ai's branch cadre\/coder-dep .* in a temporary worktree/);
      const d = artifact.data as DeployData;
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual([d.run?.ranIn, d.run?.commit], ['worktree', commit]);
      assert.match(d.run?.outputTail ?? '', /deployed from coder-ai's commit to staging/);
      assert.deepEqual(artifact.rollback, { kind: 'revert', ref: base });
      assert.equal(markers(ws).length, 0, 'the workspace\'s deploy script did not run');
      assert.equal(sh(ws, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
      assert.equal(sh(ws, 'status', '--porcelain'), '');
      assert.equal(sh(ws, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1, 'no worktree left behind');
    });

    it('an unknown strategy is needs_input naming the field', async () => {
      const { artifact } = await runSkill(planSkill, ctx('plan', app('bare-app'), { strategy: 'big-bang' }));
      assert.deepEqual(artifact.needsInput, { field: 'strategy' });
      assert.match(artifact.unable ?? '', /strategy must be "canary" or "blue-green"/);
    });

    it('redactOutput leaves lines without a secret alone', () => {
      assert.equal(redactOutput('uploading\ndone'), 'uploading\ndone');
    });

    it('loopbackUrl accepts 127.0.0.1, localhost and ::1 only', () => {
      for (const u of ['http://127.0.0.1:8080/health', 'http://localhost/healthz', 'http://[::1]:3000/ready']) assert.ok(loopbackUrl(u).ok, u);
      for (const u of ['http://10.0.0.1/health', 'https://api.example.com/health', 'file:///etc/passwd', 'nope']) assert.ok(!loopbackUrl(u).ok, u);
    });

    describe('through the pipeline and the side-effect ledger', () => {
      let h: Harness | undefined;
      afterEach(async () => { await h?.close(); h = undefined; });

      it('runs the deploy script exactly once even when the step is retried; declares the action and a rollback; the health check runs on a loopback URL', async () => {
        const ws = app('node-app');
        const previous = sh(ws, 'rev-parse', 'HEAD');
        writeFileSync(path.join(ws, 'src/version.js'), 'module.exports = 2;\n');
        sh(ws, 'add', '.');
        sh(ws, 'commit', '-q', '-m', 'v2');
        const head = sh(ws, 'rev-parse', 'HEAD');
        const http = await import('node:http');
        const server = http.createServer((req, res) => { res.statusCode = req.url === '/healthz' ? 200 : 404; res.end('ok'); });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        const port = (server.address() as { port: number }).port;
        try {
          h = await createHarness({ skills: [deploySkill], yaml: 'agents:\n  deploy-ai:\n    acmf_mode: AUTONOMOUS\n    approval_required_for: []\n' });
          const req = h.request({ agentId: 'deploy-ai', action: 'deploy', workspace: ws, input: { healthUrl: `http://127.0.0.1:${port}/healthz` }, goal: { id: 'goal_1', prompt: 'deploy to staging' } });
          const first = await h.engine.rigor.runStep({ ...req, attempt: 1 });
          assert.equal(first.passed, true, JSON.stringify(first.gates.filter((g) => g.status === 'fail')));
          const second = await h.engine.rigor.runStep({ ...req, attempt: 2 });
          assert.equal(second.passed, true);
          assert.deepEqual(markers(ws), ['staging'], 'one deploy: the retry got the recorded outcome');
          const d = second.artifact!.data as DeployData;
          assert.equal(d.run?.exitCode, 0);
          assert.equal(d.health.ok, true, d.health.note);
          assert.deepEqual(second.artifact!.actionsTaken!.map((a) => a.kind), ['deploy_staging', 'http_request']);
          assert.deepEqual(second.artifact!.rollback, { kind: 'revert', ref: previous }, 'back to the parent of the deployed commit');
          assert.match(d.rollback.basis, /nothing recorded which commit was deployed before/);
          assert.equal(d.target?.commit, head);
        } finally {
          server.close();
        }
      });

      it('production asks a person in ASSISTED (deploy_production is critical) and deploys nothing while it waits', async () => {
        const ws = app('node-app');
        h = await createHarness({ skills: [deploySkill], yaml: 'agents:\n  deploy-ai:\n    acmf_mode: ASSISTED\n' });
        const req = h.request({ agentId: 'deploy-ai', action: 'deploy', workspace: ws, input: { environment: 'production' }, goal: { id: 'goal_1', prompt: 'deploy to production' } });
        const ac = new AbortController();
        const running = h.engine.rigor.runStep({ ...req, signal: ac.signal }).catch((e: unknown) => e);
        const end = Date.now() + 10_000;
        while (!h.events.some((e) => (e as { type?: string }).type === 'approval_requested') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        const asked = h.events.find((e) => (e as { type?: string }).type === 'approval_requested') as { action?: string } | undefined;
        assert.equal(asked?.action, 'deploy_production');
        assert.equal(markers(ws).length, 0);
        ac.abort(new Error('test over'));
        await running;
      });
    });
  });
});

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { SkillContext, StepRequest, StepSummary } from '../../../../server/src/engine/rigor/skill';
import { analyzeTrace, classify, correlateLogs, debugSkills, explainSkill, mapFrame, nullExpression, parseTrace, rootCauseSkill } from '../../../../server/src/skills/debug';

const FIX = path.resolve(__dirname, '../../../fixtures/traces');
const WS = path.join(FIX, 'workspace');
const trace = (name: string) => readFileSync(path.join(FIX, name), 'utf8');

function ctx(partial: { prompt?: string; input?: Record<string, unknown>; workspace?: string; previous?: StepSummary[]; action?: string }): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 0, agentId: 'debug-ai', action: partial.action ?? 'explain',
    goal: { id: 'goal-1', prompt: partial.prompt ?? '' }, input: partial.input ?? {}, scope: 'workspace' as StepRequest['scope'],
    tier: 'standard' as StepRequest['tier'], previous: partial.previous ?? [], ...(partial.workspace ? { workspace: partial.workspace } : {}),
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => false, once: (_k, f) => f() };
}

async function run(skill: typeof explainSkill, c: SkillContext) {
  const evidence = await skill.research(c);
  const actions = await skill.propose(c, evidence);
  const artifact = await skill.generate(c, evidence);
  return { evidence, actions, artifact };
}

describe('debug-ai skills', () => {
  describe('parseTrace', () => {
    it('parses a Node V8 trace, innermost frame first, with the code of a system error', () => {
      const t = parseTrace(trace('node-null-deref.txt'));
      assert.equal(t.language, 'node');
      assert.deepEqual(t.error, { type: 'TypeError', message: "Cannot read properties of undefined (reading 'name')" });
      assert.equal(t.frames.length, 4);
      assert.deepEqual({ fn: t.frames[0]!.fn, file: t.frames[0]!.file, line: t.frames[0]!.line, col: t.frames[0]!.column }, { fn: 'getDisplayName', file: '/srv/app/src/services/user-service.js', line: 6, col: 23 });
      assert.equal(t.frames[2]!.fn, 'handleProfile');
      const c = parseTrace(trace('node-econnrefused.txt'));
      assert.equal(c.error?.code, 'ECONNREFUSED');
      assert.equal(c.frames[0]!.file, 'node:net');
    });
    it('parses a Python traceback and reverses it so the raising frame comes first', () => {
      const t = parseTrace(trace('python-keyerror.txt'));
      assert.equal(t.language, 'python');
      assert.deepEqual(t.error, { type: 'KeyError', message: "'customer'" });
      assert.deepEqual(t.frames.map((f) => [f.file, f.line, f.fn]), [
        ['/opt/shop/app/orders.py', 10, 'customer_email'], ['/opt/shop/app/handlers.py', 6, 'handle_checkout'], ['/usr/lib/python3.11/site-packages/flask/app.py', 1484, 'full_dispatch_request'],
      ]);
    });
    it('parses chained Python exceptions, the last block being the one that escaped', () => {
      const t = parseTrace(`Traceback (most recent call last):\n  File "a.py", line 3, in f\n    d["k"]\nKeyError: 'k'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File "a.py", line 5, in f\n    raise ValueError("bad")\nValueError: bad\n`);
      assert.equal(t.error?.type, 'ValueError');
      assert.deepEqual(t.causes.map((c) => c.type), ['KeyError']);
      assert.equal(t.frames[0]!.line, 5);
    });
    it('parses a Java trace with Caused by, the deepest cause\'s frames first', () => {
      const t = parseTrace(trace('java-npe.txt'));
      assert.equal(t.language, 'java');
      assert.equal(t.error?.type, 'java.lang.IllegalStateException');
      assert.equal(t.causes[0]?.type, 'java.lang.NullPointerException');
      assert.deepEqual([t.frames[0]!.className, t.frames[0]!.file, t.frames[0]!.line], ['com.acme.orders.OrderService', 'OrderService.java', 12]);
    });
    it('parses a Go panic, keeping only the panicking goroutine', () => {
      const t = parseTrace(trace('go-nil.txt'));
      assert.equal(t.language, 'go');
      assert.equal(t.error?.type, 'panic');
      assert.deepEqual(t.frames.map((f) => [f.fn, f.file, f.line]), [
        ['main.(*Server).handleProfile', '/home/ci/build/cmd/server/handler.go', 11], ['net/http.HandlerFunc.ServeHTTP', '/usr/local/go/src/net/http/server.go', 2136],
      ]);
      assert.equal(parseTrace(trace('go-concurrent-map.txt')).error?.message, 'concurrent map writes');
    });
    it('recognises a bare error line without frames, and nothing in prose', () => {
      assert.equal(parseTrace('listen EADDRINUSE: address already in use :::3000\nError: listen EADDRINUSE: address already in use :::3000').error?.code, 'EADDRINUSE');
      const none = parseTrace('the app is slow today, please look');
      assert.equal(none.error, undefined);
      assert.equal(none.frames.length, 0);
    });
  });

  describe('classify', () => {
    const cases: Array<[string, string, string, Parameters<typeof classify>[1]]> = [
      ['TypeError', "Cannot read properties of null (reading 'id')", 'node-null-deref', 'node'],
      ['Error', 'connect ECONNREFUSED 127.0.0.1:6379', 'econnrefused', 'node'],
      ['Error', "ENOENT: no such file or directory, open 'config.json'", 'enoent', 'node'],
      ['Error', 'listen EADDRINUSE: address already in use :::3000', 'eaddrinuse', 'node'],
      ['Error', "EACCES: permission denied, open '/etc/app.conf'", 'permission-denied', 'node'],
      ['KeyError', "'id'", 'python-keyerror', 'python'],
      ['ModuleNotFoundError', "No module named 'requests'", 'python-import', 'python'],
      ['ImportError', "cannot import name 'x' from 'y'", 'python-import', 'python'],
      ['IndexError', 'list index out of range', 'python-index', 'python'],
      ['AttributeError', "'NoneType' object has no attribute 'id'", 'python-none-attribute', 'python'],
      ['java.lang.NullPointerException', '', 'java-npe', 'java'],
      ['java.lang.ClassNotFoundException', 'org.postgresql.Driver', 'java-class-not-found', 'java'],
      ['java.lang.OutOfMemoryError', 'Java heap space', 'java-oom', 'java'],
      ['panic', 'runtime error: invalid memory address or nil pointer dereference', 'go-nil-deref', 'go'],
      ['panic', 'runtime error: index out of range [3] with length 3', 'go-index', 'go'],
      ['fatal error', 'concurrent map writes', 'go-concurrent-map', 'go'],
      ['java.net.SocketTimeoutException', 'Read timed out', 'timeout', 'java'],
      ['panic', 'context deadline exceeded', 'timeout', 'go'],
    ];
    for (const [type, message, id, lang] of cases) {
      it(`${type}: ${message || '(no message)'} → ${id}`, () => assert.equal(classify([{ type, message }], lang)?.cause.id, id));
    }
    it('prefers the deepest chained cause and leaves unknown errors unclassified', () => {
      assert.equal(classify([{ type: 'java.lang.IllegalStateException', message: 'x' }, { type: 'java.lang.NullPointerException', message: '' }], 'java')?.matched.type, 'java.lang.NullPointerException');
      assert.equal(classify([{ type: 'FooError', message: 'something odd' }], 'node'), undefined);
    });
  });

  describe('workspace mapping and fixes', () => {
    it('maps frames by path suffix and Java package, skipping libraries and files outside', () => {
      const files = ['src/services/user-service.js', 'src/main/java/com/acme/orders/OrderService.java', 'app/orders.py', 'a/x.js', 'b/x.js'];
      assert.equal(mapFrame({ language: 'node', file: '/srv/app/src/services/user-service.js', line: 6, raw: '' }, WS, files), 'src/services/user-service.js');
      assert.equal(mapFrame({ language: 'java', className: 'com.acme.orders.OrderService', file: 'OrderService.java', line: 12, raw: '' }, WS, files), 'src/main/java/com/acme/orders/OrderService.java');
      assert.equal(mapFrame({ language: 'node', file: '/srv/node_modules/express/lib/router/layer.js', line: 1, raw: '' }, WS, files), undefined);
      assert.equal(mapFrame({ language: 'node', file: 'x.js', line: 1, raw: '' }, WS, files), undefined, 'ambiguous bare name');
      assert.equal(mapFrame({ language: 'node', file: '/etc/passwd', line: 1, raw: '' }, WS, files), undefined);
    });
    it('finds the dereferenced expression on a line', () => {
      assert.equal(nullExpression('  return user.profile.name;', 'name', 'node'), 'user.profile');
      assert.equal(nullExpression('    return order.total + order.shipping', 'total', 'python'), 'order');
      assert.equal(nullExpression('\tname := sess.User.Name', undefined, 'go'), 'sess');
    });
    it('explains a Node null dereference with the origin line and a guard', () => {
      const r = analyzeTrace(trace('node-null-deref.txt'), WS);
      assert.equal(r.origin?.path, 'src/services/user-service.js');
      assert.equal(r.origin?.line, 6);
      assert.deepEqual(r.workspaceFrames.map((f) => f.path), ['src/services/user-service.js', 'src/routes.js']);
      assert.equal(r.classification?.id, 'node-null-deref');
      assert.equal(r.fix?.expression, 'user.profile');
      assert.match(r.fix!.guard!, /^  if \(user\.profile == null\)/);
      assert.match(r.fix!.text, /user\.profile\?\.name/);
    });
    it('explains Python, Java and Go null dereferences in their own idiom', () => {
      const py = analyzeTrace(trace('python-none.txt'), WS);
      assert.equal(py.origin?.path, 'app/orders.py');
      assert.match(py.fix!.guard!, /if order is None:/);
      const java = analyzeTrace(trace('java-npe.txt'), WS);
      assert.equal(java.origin?.path, 'src/main/java/com/acme/orders/OrderService.java');
      assert.equal(java.fix?.expression, 'customer', 'taken from the helpful NPE message');
      assert.match(java.fix!.guard!, /if \(customer == null\)/);
      const go = analyzeTrace(trace('go-nil.txt'), WS);
      assert.equal(go.origin?.path, 'cmd/server/handler.go');
      assert.match(go.fix!.guard!, /if sess == nil/);
    });
    it('computes confidence from the evidence found', () => {
      const full = analyzeTrace(trace('node-null-deref.txt'), WS).confidence;
      const noWorkspace = analyzeTrace(trace('node-null-deref.txt')).confidence;
      const unknown = analyzeTrace('WeirdError: something odd\n    at f (/x/y.js:1:1)', WS).confidence;
      assert.ok(full > noWorkspace && noWorkspace > unknown, `${full} > ${noWorkspace} > ${unknown}`);
    });
    it('correlates log lines with the error', () => {
      const r = analyzeTrace(trace('node-econnrefused.txt'), WS);
      const logs = trace('app.log').split('\n');
      const c = correlateLogs(logs, r);
      assert.deepEqual(c.map((x) => x.line), [2, 3]);
      assert.ok(c[1]!.score > c[0]!.score, 'the ERROR line outranks the WARN line');
    });
  });

  describe('through the Skill interface', () => {
    it('exports explain and root-cause for debug-ai', () => {
      assert.deepEqual(debugSkills.map((s) => `${s.agentId}/${s.action}`), ['debug-ai/explain', 'debug-ai/root-cause']);
    });
    it('explain: research → propose → generate on a trace in input.trace', async () => {
      const { evidence, actions, artifact } = await run(explainSkill, ctx({ prompt: 'why does the profile page crash?', input: { trace: trace('node-null-deref.txt') }, workspace: WS }));
      assert.deepEqual(evidence.pathsRead, ['src/services/user-service.js', 'src/routes.js']);
      assert.equal(actions[0]?.kind, 'read');
      assert.equal(artifact.goalRef, 'goal-1');
      assert.equal(artifact.unable, undefined);
      assert.ok(artifact.confidence > 0.7);
      assert.match(artifact.summary, /user-service\.js:6/);
      assert.match(artifact.text!, /Suggested fix/);
      assert.equal((artifact.data as { origin: { line: number } }).origin.line, 6);
    });
    it('explain reads the trace from the goal prompt too', async () => {
      const { artifact } = await run(explainSkill, ctx({ prompt: trace('python-keyerror.txt'), workspace: WS }));
      assert.match(artifact.summary, /Missing dictionary key at app\/orders\.py:10/);
    });
    it('root-cause correlates with input.logs, taking the error from the logs when only an instruction is given', async () => {
      const { artifact } = await run(rootCauseSkill, ctx({ action: 'root-cause', prompt: 'find the root cause of the 500s', input: { logs: trace('app.log') }, workspace: WS }));
      assert.equal(artifact.unable, undefined);
      assert.equal(artifact.kind, 'root-cause');
      const data = artifact.data as { classification: { id: string }; firstSignal: { line: number } };
      assert.equal(data.classification.id, 'econnrefused');
      assert.equal(data.firstSignal.line, 2);
    });
    it('says unable, with why, when nothing parses', async () => {
      const { artifact } = await run(explainSkill, ctx({ prompt: 'it does not work', workspace: WS }));
      assert.match(artifact.unable ?? '', /no stack frame or error line/);
      assert.deepEqual(artifact.needsInput, { field: 'trace' }, 'a missing trace is missing input, not a failure of debug-ai');
      assert.equal(artifact.confidence, 0);
      assert.equal(artifact.goalRef, 'goal-1');
    });
    it('in a workflow, after steps that produced no error to diagnose, root-cause is not applicable (the workflow goes on)', async () => {
      const previous: StepSummary[] = [{ step: 0, agentId: 'observe-ai', action: 'analyze', passed: true, confidence: 1, summary: 'not applicable: no metrics or logs', data: null }];
      const { artifact } = await run(rootCauseSkill, ctx({ prompt: 'check the service', workspace: WS, previous, action: 'root-cause' }));
      assert.match(artifact.notApplicable ?? '', /nothing to diagnose: no error or stack trace in the request or from the earlier steps \(observe-ai\)/);
      assert.equal(artifact.needsInput, undefined);
      const given = await run(rootCauseSkill, ctx({ prompt: 'check the service', workspace: WS, previous, action: 'root-cause', input: { trace: 'it broke' } }));
      assert.deepEqual(given.artifact.needsInput, { field: 'trace' }, 'a trace that was given but does not parse is still needed input');
    });
  });
});

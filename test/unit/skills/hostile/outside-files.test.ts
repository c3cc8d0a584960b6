/**
 * Files outside the workspace, and Cadre's data directory even inside it, are never read by a skill:
 * symlinks out (file and directory), traces naming outside files, and input paths outside. The
 * serialized artifacts and evidence are searched for the outside files' content.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { plainGit } from '../../../fixtures/hostile/build';
import { allowReadPaths, isProtected, protectDataDir, walkFiles, WorkspaceFiles } from '../../../../server/src/skills/workspace/files';
import { reviewSkill } from '../../../../server/src/skills/review';
import { scanSkill, secretsSkill } from '../../../../server/src/skills/security/skill';
import { explainSkill } from '../../../../server/src/skills/debug';
import { fixSkill } from '../../../../server/src/skills/coding';
import { attackPathsSkill, huntSkill } from '../../../../server/src/skills/threat';
import { runSkill, skillContext } from '../../../support/skill-context';
import { isInside } from '../../../../server/src/skills/review-checks';
import { runCommand } from '../../../../server/src/skills/testing/runner';
import { readCoverage } from '../../../../server/src/skills/testing';

describe('hostile repositories: files outside the workspace', function () {
  this.timeout(60_000);
  const mark = `OUTSIDE-${randomBytes(6).toString('hex')}`;
  const awsKey = `AKIA${randomBytes(8).toString('hex').toUpperCase().slice(0, 16)}`;
  let root: string;
  let outside: string;
  let dataDir: string;
  let ws: string;

  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cadre-outside-'));
    outside = path.join(root, 'outside');
    dataDir = path.join(root, 'cadre-data');
    ws = path.join(root, 'ws');
    mkdirSync(outside);
    mkdirSync(dataDir);
    mkdirSync(path.join(ws, 'src'), { recursive: true });
    writeFileSync(path.join(outside, 'secret.txt'), `${mark} line 1\n${mark} line 2\n`);
    writeFileSync(path.join(outside, 'credentials'), `[default]\naws_access_key_id = ${awsKey}\naws_secret_access_key = ${mark}/abcdefghijklmnopqrstuvwxyz0123\n`);
    writeFileSync(path.join(outside, 'rules.yaml'), `${mark}: [unterminated\n`);
    writeFileSync(path.join(outside, 'advisories.json'), `{"${mark}": `);
    writeFileSync(path.join(dataDir, 'store.json'), `{"keys":{"k1":{"hash":"${mark}-KEYHASH"}}}\n`);
    protectDataDir(dataDir);
    plainGit(ws, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(ws, 'src/app.js'), 'function f(o) {\n  return o.name;\n}\nmodule.exports = f;\n');
    plainGit(ws, 'add', '.');
    plainGit(ws, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'init');
    symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'leak.txt'));
    symlinkSync(outside, path.join(ws, 'leakdir'));
    symlinkSync(dataDir, path.join(ws, 'data'));
    writeFileSync(path.join(ws, 'src/new.js'), 'module.exports = 1;\n');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const clean = (what: unknown, label: string) => {
    const s = JSON.stringify(what);
    assert.ok(!s.includes(mark), `${label} carries outside content: ${s.slice(Math.max(0, s.indexOf(mark) - 200), s.indexOf(mark) + 60)}`);
    assert.ok(!s.includes(awsKey), `${label} carries the outside AWS key`);
    assert.ok(!/root:x:0:0/.test(s), `${label} carries /etc/passwd`);
  };

  describe('the confinement rule', () => {
    it('resolves inside paths and refuses outside, symlinked-out and protected ones, naming them only', () => {
      const f = new WorkspaceFiles(ws);
      assert.equal((f.resolve('src/app.js') as { rel: string }).rel, 'src/app.js');
      for (const p of ['leak.txt', 'leakdir/secret.txt', '../outside/secret.txt', path.join(outside, 'credentials'), '/etc/passwd']) {
        const r = f.resolve(p);
        assert.equal(r.ok, false, p);
        assert.equal((r as { reason: string }).reason, 'outside the workspace', p);
      }
      const inside = new WorkspaceFiles(root); // the data directory is inside this workspace, and still refused
      assert.equal((inside.resolve('cadre-data/store.json') as { reason: string }).reason, 'protected (Cadre data or key material)');
      assert.ok(isProtected(path.join(dataDir, 'store.json')));
      const read = f.readText('leak.txt');
      assert.equal(read.ok, false);
      clean(read, 'a refused read');
    });

    it('a folder of security.read_paths (the user\'s config) is readable outside the workspace; protected paths inside it stay refused', () => {
      allowReadPaths([outside]);
      try {
        const f = new WorkspaceFiles(ws);
        assert.equal(f.resolve(path.join(outside, 'secret.txt')).ok, true, 'allowed by the configuration');
        assert.equal((f.resolve('/etc/passwd') as { reason: string }).reason, 'outside the workspace', 'nothing else');
        const data = new WorkspaceFiles(ws, { allow: [root] });
        assert.equal((data.resolve(path.join(dataDir, 'store.json')) as { reason: string }).reason, 'protected (Cadre data or key material)');
      } finally {
        allowReadPaths([]);
      }
      assert.equal((new WorkspaceFiles(ws).resolve(path.join(outside, 'secret.txt')) as { reason: string }).reason, 'outside the workspace', 'withdrawn');
    });

    it("the scope-boundary gate's check counts symlinks out and the data directory as outside", () => {
      assert.equal(isInside(ws, 'src/app.js'), true);
      assert.equal(isInside(ws, 'leak.txt'), false);
      assert.equal(isInside(ws, 'leakdir/secret.txt'), false);
      assert.equal(isInside(root, 'cadre-data/store.json'), false, 'the data directory inside a workspace');
      assert.equal(isInside(root, 'outside/secret.txt'), true);
    });

    it('directory walks never enter a symlinked directory and skip links out, reporting them', () => {
      const skipped: string[] = [];
      const files = walkFiles(ws, { skipDirs: new Set(['.git']), onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
      assert.deepEqual(files.sort(), ['src/app.js', 'src/new.js']);
      assert.deepEqual(skipped.sort(), ['data: outside the workspace', 'leak.txt: outside the workspace', 'leakdir: outside the workspace']);
    });
  });

  it('review-ai does not follow a symlink out of the workspace (git diff mode)', async () => {
    const run = await runSkill(reviewSkill, skillContext({ agentId: 'review-ai', action: 'review', workspace: ws }));
    clean(run, 'review-ai (diff)');
    assert.ok(run.evidence.constraints.some((c) => /leak\.txt: outside the workspace/.test(c)), run.evidence.constraints.join('; '));
    assert.ok(!run.evidence.pathsRead.includes('leak.txt'));
  });

  it('review-ai does not read given files that resolve outside (symlinked file and directory)', async () => {
    const run = await runSkill(reviewSkill, skillContext({ agentId: 'review-ai', action: 'review', workspace: ws, input: { files: ['leak.txt', 'leakdir/secret.txt', 'data/store.json', 'src/app.js'] } }));
    clean(run, 'review-ai (files)');
    assert.deepEqual(run.evidence.pathsRead, ['src/app.js']);
  });

  it('security-ai secrets does not scan through symlinks out', async () => {
    const run = await runSkill(secretsSkill, skillContext({ agentId: 'security-ai', action: 'secrets', workspace: ws }));
    clean(run, 'security-ai secrets');
  });

  it('debug-ai returns no line of /etc/passwd, the data directory or an outside credentials file named in a trace', async () => {
    const trace = [
      "TypeError: Cannot read properties of undefined (reading 'name')",
      '    at f (/etc/passwd:5:1)',
      `    at g (${path.join(dataDir, 'store.json')}:1:1)`,
      `    at h (${path.join(outside, 'credentials')}:2:1)`,
      `    at i (${path.join(ws, 'leak.txt')}:1:1)`,
      `    at j (${path.join(ws, 'leakdir', 'secret.txt')}:1:1)`,
      `    at k (${path.join(ws, 'data', 'store.json')}:1:1)`,
      `    at l (${path.join(ws, 'src/app.js')}:2:10)`,
    ].join('\n');
    for (const workspace of [ws, root]) { // `root` holds the data directory and the outside files
      const run = await runSkill(explainSkill, skillContext({ agentId: 'debug-ai', action: 'explain', workspace, input: { trace } }));
      if (workspace === root) {
        // Inside this workspace the outside files are legitimately readable: only the data directory stays closed.
        const s = JSON.stringify(run);
        assert.ok(!s.includes(`${mark}-KEYHASH`), 'the data directory is read through debug-ai');
        assert.ok(!/root:x:0:0/.test(s));
      } else {
        clean(run, 'debug-ai');
        assert.ok(JSON.stringify(run.artifact.data).includes('return o.name;'), 'the workspace frame is still mapped');
      }
    }
  });

  it("security-ai's input.baseline, input.advisories and input.rules outside the workspace are refused without quoting them", async () => {
    const b = await runSkill(secretsSkill, skillContext({ agentId: 'security-ai', action: 'secrets', workspace: ws, input: { baseline: path.join(outside, 'credentials') } }));
    clean(b, 'input.baseline');
    assert.match(b.artifact.unable ?? '', /input\.baseline: .*credentials is outside the workspace/);
    const s = await runSkill(scanSkill, skillContext({
      agentId: 'security-ai', action: 'scan', workspace: ws, tier: 'ultra',
      input: { advisories: path.join(outside, 'advisories.json'), rules: '../outside/rules.yaml' },
    }));
    clean(s, 'input.advisories / input.rules');
    const text = JSON.stringify(s.artifact.data);
    assert.match(text, /input\.advisories: [^"]*advisories\.json is outside the workspace/);
    assert.match(text, /input\.rules: \.\.\/outside\/rules\.yaml is outside the workspace/);
  });

  it("threathunter-ai's input.logs, input.indicators, input.series and input.assets outside the workspace are not read", async () => {
    writeFileSync(path.join(outside, 'auth.log'), `Jan 1 00:00:00 host sshd[1]: Failed password for root from 10.0.0.1 port 22 ssh2 ${mark}\n`.repeat(10));
    const h = await runSkill(huntSkill, skillContext({
      agentId: 'threathunter-ai', action: 'hunt', workspace: ws,
      input: { logs: [path.join(outside, 'auth.log'), 'leakdir/auth.log', '/etc/passwd'], indicators: path.join(outside, 'advisories.json'), series: '../outside/secret.txt' },
    }));
    clean(h, 'threathunter-ai hunt');
    assert.ok(!h.evidence.pathsRead.some((p) => p.includes('auth.log') || p.includes('passwd')), h.evidence.pathsRead.join(','));
    const a = await runSkill(attackPathsSkill, skillContext({ agentId: 'threathunter-ai', action: 'attack-paths', workspace: ws, input: { assets: path.join(outside, 'advisories.json') } }));
    clean(a, 'threathunter-ai attack-paths');
  });

  it('coder-ai does not read a committed symlink that leads out of the workspace', async () => {
    const repo = path.join(root, 'coder-repo');
    mkdirSync(path.join(repo, 'src'), { recursive: true });
    plainGit(repo, 'init', '-q', '-b', 'main');
    symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'src/link.js'));
    writeFileSync(path.join(repo, 'src/ok.js'), 'const a = eval("1");\n');
    plainGit(repo, 'add', '.');
    plainGit(repo, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'init');
    const finding = (file: string) => ({
      ruleId: 'code/eval', severity: 'medium', message: 'eval', file, fingerprint: `fp-${file}`,
      range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 5 },
      fix: { description: 'rewrite', edits: [{ file, range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 5 }, newText: 'let' }] },
    });
    const run = await runSkill(fixSkill, skillContext({ agentId: 'coder-ai', action: 'fix', workspace: repo, input: { findings: [finding('src/link.js'), finding('src/ok.js')] } }));
    clean(run, 'coder-ai fix');
    assert.match(JSON.stringify(run.artifact.data), /src\/link\.js[^}]*outside the workspace/);
  });

  it("tester-ai's input.lcov outside the workspace is not read; the same report inside is", () => {
    const lcov = 'SF:src/app.js\nDA:1,1\nDA:2,0\nLF:2\nLH:1\nend_of_record\n';
    writeFileSync(path.join(outside, 'lcov.info'), lcov);
    assert.equal(readCoverage(ws, { lcov: path.join(outside, 'lcov.info') }), undefined);
    assert.equal(readCoverage(ws, { lcov: 'leakdir/lcov.info' }), undefined);
    writeFileSync(path.join(ws, 'inside.info'), lcov);
    try {
      assert.ok(readCoverage(ws, { lcov: 'inside.info' }), 'a report inside the workspace is read');
    } finally {
      rmSync(path.join(ws, 'inside.info'));
    }
  });

  it("tester-ai's test command does not inherit Cadre's API key or data directory", async () => {
    const saved = process.env['CADRE_API_KEY'];
    process.env['CADRE_API_KEY'] = `cadre_${mark}`;
    try {
      const r = await runCommand([process.execPath, '-e', 'console.log(JSON.stringify(process.env))'], { cwd: ws, timeoutMs: 20_000 });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.ok(r.stdout.includes('"PATH"'), 'the environment is otherwise passed');
      assert.ok(!r.stdout.includes(mark), 'the API key reached the test command');
      assert.ok(!r.stdout.includes('CADRE_PROTECTED_PATHS'));
    } finally {
      if (saved === undefined) delete process.env['CADRE_API_KEY']; else process.env['CADRE_API_KEY'] = saved;
    }
  });

  it('an invalid input file inside the workspace is reported without quoting its content', async () => {
    writeFileSync(path.join(ws, 'bad-baseline.json'), `${mark} is not json`);
    try {
      const run = await runSkill(secretsSkill, skillContext({ agentId: 'security-ai', action: 'secrets', workspace: ws, input: { baseline: 'bad-baseline.json' } }));
      clean(run, 'a bad baseline');
      assert.match(run.artifact.unable ?? '', /baseline: not valid JSON/);
    } finally {
      rmSync(path.join(ws, 'bad-baseline.json'));
    }
  });
});

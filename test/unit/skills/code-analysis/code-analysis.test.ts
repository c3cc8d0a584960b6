import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeCode, CODE_ANALYSIS_RULES, isRequestSource, ruleAnchor } from '../../../../server/src/skills/code-analysis/index';
import { separatedRepeats } from '../../../../server/src/skills/code-analysis/analyzer';
import { scanCode } from '../../../../server/src/skills/security/code';
import type { Finding } from '../../../../server/src/skills/findings/finding';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/code-analysis');
const VULN = path.join(FIXTURES, 'vulnerable-express');
const FIXED = path.join(FIXTURES, 'fixed-express');

function walk(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((f) => {
    const abs = path.join(dir, f);
    return statSync(abs).isDirectory() ? walk(root, abs) : [path.relative(root, abs).split(path.sep).join('/')];
  });
}

/** `file:line rule` of every `// VULN <rule>` marker of a fixture tree (the labels). */
function labels(root: string, files: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const f of files) {
    readFileSync(path.join(root, f), 'utf8').split('\n').forEach((l, i) => {
      const m = /\/\/ VULN (\S+)/.exec(l);
      if (m) out.add(`${f}:${i + 1} ${m[1]}`);
    });
  }
  return out;
}
const keyOf = (f: Finding) => `${f.file}:${f.range.startLine} ${f.ruleId}`;
const analyze = (file: string, text: string) => analyzeCode(file, text).findings.map((f) => `${f.range.startLine} ${f.ruleId}`);

describe('code analysis: the vulnerable app and its fixed twin', () => {
  it('finds every labelled vulnerability of the vulnerable app and nothing else (vendored files skipped)', async () => {
    const files = walk(VULN);
    const r = await scanCode(VULN, files);
    const got = new Set(r.findings.map(keyOf));
    const want = labels(VULN, files.filter((f) => !r.vendored.some((v) => v.file === f)));
    assert.deepEqual([...want].filter((k) => !got.has(k)), [], 'missed (recall)');
    assert.deepEqual([...got].filter((k) => !want.has(k)), [], 'not labelled (precision)');
    assert.ok(want.size >= 40, `${want.size} labelled`);
  });

  it('covers each sink class and code rule at least once', async () => {
    const r = await scanCode(VULN, walk(VULN));
    const rules = new Set(r.findings.map((f) => f.ruleId));
    for (const rule of CODE_ANALYSIS_RULES) {
      if (rule.id === 'review/eval' || rule.id === 'review/sql-concatenation') continue; // constant-free pattern cases are in the unit tests below
      assert.ok(rules.has(rule.id), `${rule.id} found on the vulnerable app`);
    }
  });

  it('reports nothing on the fixed twin (same code, sanitized or parameterised)', async () => {
    const files = walk(FIXED);
    const r = await scanCode(FIXED, files);
    assert.deepEqual(r.findings.map(keyOf), []);
    assert.ok(r.files.length >= 14, `${r.files.length} files analyzed`);
  });

  it('names the source → sink path and the CWE in the message', async () => {
    const r = await scanCode(VULN, ['routes/search.ts', 'routes/files.js', 'routes/allocations.js']);
    const msg = (file: string, line: number) => r.findings.find((f) => f.file === file && f.range.startLine === line)!.message;
    assert.match(msg('routes/search.ts', 18), /req\.body\.email → email → sql → db\.query\(\).*\(CWE-89\)/);
    assert.match(msg('routes/files.js', 11), /req\.query\.name → file → fs\.readFileSync\(\).*\(CWE-22\)/);
    assert.match(msg('routes/files.js', 21), /req\.body\.target → target → exec\(\).*\(CWE-78\)/);
    assert.match(msg('routes/allocations.js', 16), /operator injection|\$ne/);
    const f = r.findings.find((x) => x.ruleId === 'code/sql-injection')!;
    assert.equal(f.severity, 'critical');
    assert.ok(f.range.startColumn > 1 && f.range.endLine >= f.range.startLine);
  });
});

describe('code analysis: taint rules', () => {
  it('follows destructuring, template literals, concatenation and pass-through calls; stops at sanitizers', () => {
    const src = `
app.get('/a', (req, res) => {
  const { id } = req.query;
  const name = String(req.params.name).trim().toLowerCase();
  db.query(\`SELECT * FROM t WHERE id = \${id}\`);
  db.query('SELECT * FROM t WHERE name = ' + name);
  db.query('SELECT * FROM t WHERE id = ' + parseInt(id, 10));
  db.query('SELECT * FROM t WHERE id = $1', [id]);
  const n = Number(req.query.n);
  db.query('SELECT * FROM t LIMIT ' + n);
});`;
    assert.deepEqual(analyze('a.js', src), ['5 code/sql-injection', '6 code/sql-injection']);
  });

  it('a sanitizing reassignment clears the taint on straight-line code, a branch does not', () => {
    const src = `
app.get('/b', (req, res) => {
  let file = req.query.f;
  file = path.basename(file);
  fs.readFileSync(file);
  let other = req.query.g;
  if (req.query.safe) other = 'default.txt';
  fs.readFileSync(other);
});`;
    assert.deepEqual(analyze('b.js', src), ['8 code/path-traversal']);
  });

  it('an exiting guard (allow-list or prefix check) clears path, URL and redirect sinks after it', () => {
    const src = `
router.get('/c', async (req, res) => {
  const target = path.resolve(ROOT, req.query.f);
  if (!target.startsWith(ROOT)) return res.status(400).end();
  fs.readFileSync(target);
  const url = req.query.u;
  if (!ALLOWED.includes(url)) throw new Error('no');
  await fetch(url);
  res.redirect(req.query.next);
});`;
    assert.deepEqual(analyze('c.js', src), ['9 code/open-redirect']);
  });

  it('Koa ctx, Fastify request, Next route handlers and DOM sources are sources; unrelated names are not', () => {
    for (const e of ['req.query.a', 'req.body', 'req.params.id', 'req.headers.host', 'req.cookies.sid', 'ctx.request.body.x', 'ctx.query.q', 'request.query.id', 'location.hash', 'document.URL']) {
      assert.ok(isRequestSource(e), e);
    }
    for (const e of ['config.query', 'req.app', 'res.locals.user', 'ctx.state.user', 'process.env.X']) assert.ok(!isRequestSource(e), e);
    const next = `
export async function GET(request, { params }) {
  const q = request.nextUrl.searchParams.get('q');
  const body = await request.json();
  await fetch(params.url);
  await db.query('SELECT * FROM t WHERE q = ' + q);
  await users.findOne(body);
}`;
    assert.deepEqual(analyze('app/api/x/route.js', next), ['5 code/ssrf', '6 code/sql-injection', '7 code/nosql-injection']);
  });

  it('a `req` typed as something other than a request is not a source', () => {
    const src = `
export function commit(req: CommitRequest) { fs.writeFileSync(req.files[0], 'x'); }
export function handle(req: Request) { fs.writeFileSync(req.query.f, 'x'); }
export function handleKoa(ctx: Koa.ParameterizedContext) { fs.writeFileSync(ctx.query.f, 'x'); }`;
    assert.deepEqual(analyze('t.ts', src), ['3 code/path-traversal', '4 code/path-traversal']);
  });

  it('callbacks over tainted data taint their parameter (keys of a request body)', () => {
    const src = `
app.post('/d', (req, res) => {
  Object.keys(req.body).forEach((k) => { cfg[k][req.body[k].name] = 1; });
});`;
    assert.deepEqual(analyze('d.js', src), ['3 code/prototype-pollution']);
  });

  it('a value picked from a constant table is constant, whatever the key', () => {
    const src = `
const COLS = { a: 'name', b: 'date' };
app.get('/e', (req, res) => {
  const col = COLS[req.query.sort] ?? 'id';
  db.query('SELECT * FROM t ORDER BY ' + col);
});`;
    assert.deepEqual(analyze('e.js', src), []);
  });
});

describe('code analysis: constant arguments and pattern rules', () => {
  it('constant arguments are never findings', () => {
    const src = `
const { exec, execSync } = require('child_process');
const CODE = '1 + 1';
eval('1 + 1');
eval(CODE);
eval(\`2 * \${3}\`);
new Function('return 1');
exec('ls -la');
execSync(\`git status\`);
db.query('SELECT * FROM users');
fs.readFileSync('./config.json');
fetch('https://api.example.com/x');
res.redirect('/login');
res.send('<p>ok</p>');
setTimeout('tick()', 10);
jwt.sign(payload, process.env.JWT_SECRET);`;
    assert.deepEqual(analyze('k.js', src), []);
  });

  it('non-constant code and SQL without a request source still get the pattern rules', () => {
    const src = `
const { exec } = require('child_process');
function run(code, name, db) {
  eval(code);
  new Function('a', code);
  exec('ls ' + name);
  db.query('SELECT * FROM t WHERE n = ' + name);
}`;
    assert.deepEqual(analyze('p.js', src), ['4 review/eval', '5 review/eval', '6 review/shell-injection', '7 review/sql-concatenation']);
  });

  it('weak hashing only for passwords and secrets; weak ciphers; JWT literals; cookies', () => {
    const src = `
const crypto = require('crypto');
const a = crypto.createHash('sha1').update(user.password).digest('hex');
const b = crypto.createHash('sha1').update(fileBody).digest('hex');
const c = crypto.createCipheriv('rc4', key, '');
const d = crypto.createCipheriv('aes-128-ecb', key, null);
const e = crypto.createCipheriv('aes-256-gcm', key, iv);
const SECRET = 'shhh';
jwt.verify(token, SECRET);
res.cookie('sid', id, { httpOnly: true });
res.cookie('prefs', p, { secure: false });
res.cookie('lang', 'en');
res.cookie('connect.sid', id, { httpOnly: true, secure: true });`;
    assert.deepEqual(analyze('w.js', src), ['3 code/weak-hash', '5 code/weak-cipher', '6 code/weak-cipher', '9 code/hardcoded-jwt-secret', '10 code/insecure-cookie', '11 code/insecure-cookie']);
  });

  it('ReDoS: nested quantifiers flagged, separated repeats not', () => {
    assert.deepEqual(analyze('r.js', 'const a = /(a+)+b/;\nconst b = /^(\\d+\\.)*\\d+$/;\nconst c = /(?:,\\s*\\w+)*/;\nconst d = new RegExp("(x*)*y");\nconst e = /^[a-z]+$/;'),
      ['1 code/redos', '4 code/redos']);
    assert.equal(separatedRepeats('(a+)+'), false);
    assert.equal(separatedRepeats('(a[a-z]+)+'), false, 'the separator must not be matched by the inner repeat');
    assert.equal(separatedRepeats('(?:\\.[a-z]+)*'), true);
    // Shapes safe-regex2 rejects that are linear: optional or bounded groups, and rounds with a separator no other atom matches.
    const safe = ['/^\\d+(\\.\\d+)?$/', '/(?:\\.\\d{1,3}){3}/', '/apt-get\\s+(?:-\\S+\\s+)*install/', '/^([0-9]+)(?:-([0-9]+))?$/', '/(?:[0-9a-f]{0,4}:){2,7}/'];
    assert.deepEqual(analyze('s.js', safe.map((r, i) => `const r${i} = ${r};`).join('\n')), []);
  });

  it('TLS verification disabled', () => {
    assert.deepEqual(analyze('t.js', "new https.Agent({ rejectUnauthorized: false });\nprocess.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';"), ['1 review/tls-disabled', '2 review/tls-disabled']);
  });

  it('every rule has a CWE, a rationale and a docs anchor that exists in docs/skills.md', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../../../docs/skills.md'), 'utf8');
    for (const r of CODE_ANALYSIS_RULES) {
      assert.match(r.cwe, /^CWE-\d+$/, r.id);
      assert.ok(r.description.length > 20, r.id);
      assert.ok(r.helpUri?.endsWith(`#${ruleAnchor(r.id)}`), r.id);
      assert.ok(doc.includes(`<a id="${ruleAnchor(r.id)}"></a>`), `docs/skills.md anchor for ${r.id}`);
    }
  });
});

/**
 * The fixture projects of the core-loop tests and of bench/soak.ts, built in temp folders at test
 * time as real git repositories (a user's project is a repository with history, and review-ai's diff
 * mode and coder-ai's branches need one). Nothing here needs the network: the test suites use
 * `node --test`, and the web app is plain node:http (express is not installed offline).
 *
 * - `tsLibrary`: a small TypeScript library (src/*.ts, the compiled lib/*.js committed beside it as
 *   many packages do) with a 12-test `node --test` suite that passes.
 * - `webApp`: an Express-shaped HTTP app (routes table, handlers, middleware) with known flaws a
 *   scanner should report (a hard-coded token, SQL built by concatenation, eval of a query string),
 *   and a passing `node --test` suite that starts it on an ephemeral port.
 * - `noLogs`: a repository with source and docs but no log files: nothing for threathunter-ai to hunt in.
 * - `trace`: a Node stack trace whose top frame is a line of `tsLibrary`'s lib/index.js.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface Projects {
  root: string;
  tsLibrary: string;
  webApp: string;
  noLogs: string;
  /** A stack trace from tsLibrary (its top frame is lib/index.js:NN). */
  trace: string;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
}

function commitAll(dir: string, message: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'dev@example.com');
  git('config', 'user.name', 'Dev');
  git('config', 'commit.gpgsign', 'false');
  git('add', '.');
  git('commit', '-q', '-m', message);
}

const TS_SRC = `/** Small string and number helpers. */

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\\u0300-\\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function clamp(value: number, min: number, max: number): number {
  if (min > max) throw new RangeError('min must not exceed max');
  return Math.min(max, Math.max(min, value));
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('size must be a positive integer');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function parseDuration(text: string): number {
  const m = /^(\\d+)(ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new SyntaxError(\`not a duration: \${text}\`);
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === 'ms') return n;
  if (unit === 's') return n * 1000;
  if (unit === 'm') return n * 60_000;
  return n * 3_600_000;
}

export interface User {
  name: string;
  email?: string;
}

export function displayName(user: User | undefined): string {
  return user!.name.trim();
}
`;

const LIB_JS = `'use strict';
/* Compiled from src/index.ts (tsc, target ES2020, commonjs). */
Object.defineProperty(exports, '__esModule', { value: true });

function slugify(text) {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\\u0300-\\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function clamp(value, min, max) {
  if (min > max) throw new RangeError('min must not exceed max');
  return Math.min(max, Math.max(min, value));
}

function chunk(items, size) {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('size must be a positive integer');
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function parseDuration(text) {
  const m = /^(\\d+)(ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new SyntaxError(\`not a duration: \${text}\`);
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === 'ms') return n;
  if (unit === 's') return n * 1000;
  if (unit === 'm') return n * 60000;
  return n * 3600000;
}

function displayName(user) {
  return user.name.trim();
}

exports.slugify = slugify;
exports.clamp = clamp;
exports.chunk = chunk;
exports.parseDuration = parseDuration;
exports.displayName = displayName;
`;

const LIB_TESTS = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const lib = require('../lib/index.js');

test('slugify lowercases and joins words', () => assert.equal(lib.slugify('Hello World'), 'hello-world'));
test('slugify drops accents', () => assert.equal(lib.slugify('Crème brûlée'), 'creme-brulee'));
test('slugify trims separators', () => assert.equal(lib.slugify('  --a b--  '), 'a-b'));
test('clamp keeps a value inside', () => assert.equal(lib.clamp(5, 0, 10), 5));
test('clamp raises to min', () => assert.equal(lib.clamp(-1, 0, 10), 0));
test('clamp lowers to max', () => assert.equal(lib.clamp(11, 0, 10), 10));
test('clamp rejects min > max', () => assert.throws(() => lib.clamp(1, 2, 0), RangeError));
test('chunk splits evenly', () => assert.deepEqual(lib.chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]));
test('chunk keeps the rest', () => assert.deepEqual(lib.chunk([1, 2, 3], 2), [[1, 2], [3]]));
test('chunk rejects size 0', () => assert.throws(() => lib.chunk([1], 0), RangeError));
test('parseDuration reads units', () => assert.deepEqual(['5ms', '2s', '3m', '1h'].map(lib.parseDuration), [5, 2000, 180000, 3600000]));
test('displayName trims', () => assert.equal(lib.displayName({ name: ' Ada ' }), 'Ada'));
`;

const WEB_ROUTES = `'use strict';
// An Express-shaped app on node:http: a routes table, middleware, handlers with (req, res).
const http = require('node:http');
const { users } = require('./db');

// Known flaw: a hard-coded credential.
const ADMIN_TOKEN = 'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ';

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function findUserQuery(name) {
  // Known flaw: SQL built by string concatenation.
  return "SELECT * FROM users WHERE name = '" + name + "'";
}

const routes = {
  'GET /health': (req, res) => json(res, 200, { ok: true }),
  'GET /users': (req, res) => json(res, 200, users),
  'GET /users/search': (req, res, url) => json(res, 200, { sql: findUserQuery(url.searchParams.get('name') || '') }),
  'GET /calc': (req, res, url) => {
    // Known flaw: eval of user input.
    const result = eval(url.searchParams.get('expr') || '0');
    json(res, 200, { result });
  },
  'GET /admin': (req, res) => {
    if (req.headers.authorization !== 'Bearer ' + ADMIN_TOKEN) return json(res, 401, { error: 'unauthorized' });
    json(res, 200, { users: users.length });
  },
};

function createApp() {
  return http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const handler = routes[req.method + ' ' + url.pathname];
    if (!handler) return json(res, 404, { error: 'not found' });
    try {
      handler(req, res, url);
    } catch (err) {
      json(res, 500, { error: String(err && err.message) });
    }
  });
}

module.exports = { createApp, findUserQuery };

if (require.main === module) createApp().listen(Number(process.env.PORT) || 3000);
`;

const WEB_TESTS = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { createApp, findUserQuery } = require('../src/app');

async function withServer(fn) {
  const server = createApp();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await fn('http://127.0.0.1:' + server.address().port);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('GET /health answers ok', () => withServer(async (base) => {
  const res = await fetch(base + '/health');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ok: true });
}));
test('GET /users lists users', () => withServer(async (base) => {
  const res = await fetch(base + '/users');
  assert.equal((await res.json()).length, 2);
}));
test('unknown route is 404', () => withServer(async (base) => assert.equal((await fetch(base + '/nope')).status, 404)));
test('admin needs the token', () => withServer(async (base) => assert.equal((await fetch(base + '/admin')).status, 401)));
test('search builds a query', () => assert.match(findUserQuery('ada'), /ada/));
`;

const NO_LOGS = {
  'README.md': '# notes\n\nA small note-taking helper. No services, no logs.\n',
  'src/notes.js': "'use strict';\n\nfunction addNote(list, text) {\n  return [...list, { text, at: Date.now() }];\n}\n\nfunction countWords(list) {\n  return list.reduce((n, note) => n + note.text.split(/\\s+/).filter(Boolean).length, 0);\n}\n\nmodule.exports = { addNote, countWords };\n",
  'package.json': JSON.stringify({ name: 'notes', version: '0.1.0', private: true, main: 'src/notes.js' }, null, 2) + '\n',
};

/** Builds the three projects in one temp folder; each is its own git repository with one commit. */
export function buildProjects(): Projects {
  const root = mkdtempSync(path.join(tmpdir(), 'cadre-core-loop-'));
  const tsLibrary = path.join(root, 'ts-library');
  write(tsLibrary, {
    'package.json': JSON.stringify({ name: 'tiny-utils', version: '1.2.0', main: 'lib/index.js', types: 'src/index.ts', scripts: { build: 'tsc', test: 'node --test' } }, null, 2) + '\n',
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2020', module: 'commonjs', strict: true, outDir: 'lib', declaration: false }, include: ['src'] }, null, 2) + '\n',
    'src/index.ts': TS_SRC,
    'lib/index.js': LIB_JS,
    'test/index.test.js': LIB_TESTS,
    'README.md': '# tiny-utils\n\nslugify, clamp, chunk, parseDuration.\n',
  });
  commitAll(tsLibrary, 'tiny-utils 1.2.0');

  const webApp = path.join(root, 'web-app');
  write(webApp, {
    'package.json': JSON.stringify({ name: 'users-api', version: '0.3.0', private: true, main: 'src/app.js', scripts: { start: 'node src/app.js', test: 'node --test test/' } }, null, 2) + '\n',
    'src/app.js': WEB_ROUTES,
    'src/db.js': "'use strict';\nmodule.exports = { users: [{ id: 1, name: 'ada' }, { id: 2, name: 'grace' }] };\n",
    'test/app.test.js': WEB_TESTS,
    'README.md': '# users-api\n\nA small users API.\n',
  });
  commitAll(webApp, 'users-api');

  const noLogs = path.join(root, 'no-logs');
  write(noLogs, NO_LOGS);
  commitAll(noLogs, 'notes');

  const line = LIB_JS.split('\n').findIndex((l) => l.includes('return user.name.trim()')) + 1;
  const trace = [
    "TypeError: Cannot read properties of undefined (reading 'name')",
    `    at displayName (${path.join(tsLibrary, 'lib/index.js')}:${line}:15)`,
    `    at Object.<anonymous> (${path.join(tsLibrary, 'test/index.test.js')}:17:49)`,
    '    at Module._compile (node:internal/modules/cjs/loader:1358:14)',
  ].join('\n');
  return { root, tsLibrary, webApp, noLogs, trace };
}

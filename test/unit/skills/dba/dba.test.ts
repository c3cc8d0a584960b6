import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import {
  addDdl, analyzeQueriesSkill, analyzeQuery, emptySchema, guessDialect, indexCovers, indexesSkill, mayQuery, parseStatement, scanCode, splitStatements,
  type AnalyzeQueriesData, type IndexesData,
} from '../../../../server/src/skills/dba/index';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/dba');
const dirs: string[] = [];

function ws(fixture?: 'planted' | 'clean'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-dba-'));
  dirs.push(dir);
  if (fixture) cpSync(path.join(FIX, fixture), dir, { recursive: true });
  return dir;
}

const run = (action: 'analyze-queries' | 'indexes', workspace: string, input: Record<string, unknown> = {}) =>
  runSkill(action === 'indexes' ? indexesSkill : analyzeQueriesSkill, skillContext({ agentId: 'dba-ai', action, workspace, input, tier: 'pro' }));

const where = (d: AnalyzeQueriesData) => d.findings.map((f) => `${f.rule} ${f.file}:${f.line}`).sort();

describe('dba-ai analyze-queries and indexes', function () {
  this.timeout(30_000);
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('both are embedded skills of dba-ai', () => {
    assert.ok(skills.includes(analyzeQueriesSkill) && skills.includes(indexesSkill));
    assert.deepEqual([analyzeQueriesSkill.agentId, analyzeQueriesSkill.action, indexesSkill.action], ['dba-ai', 'analyze-queries', 'indexes']);
  });

  describe('parsing', () => {
    it('splits statements outside strings, comments and dollar quotes, each with its first line', () => {
      const st = splitStatements("SELECT 1;\n-- a comment; with a semicolon\nSELECT 'a;b' /* ; */;\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\n\n  UPDATE t SET a = 1");
      assert.deepEqual(st.map((s) => [s.keyword, s.line]), [['SELECT', 1], ['SELECT', 3], ['CREATE', 4], ['UPDATE', 6]]);
    });

    it('a syntax error names the line in the file', () => {
      const p = parseStatement('SELECT a FROM\n t WHERE', 'postgresql', 10);
      assert.ok(!p.ok);
      assert.equal(p.line, 11);
      assert.match(p.message, /^PostgreSQL syntax error: Expected/);
    });

    it('schema: primary keys, unique columns and constraints, inline MySQL keys, CREATE INDEX and ALTER TABLE ADD', () => {
      const my = emptySchema();
      assert.deepEqual(addDdl(my, 'm.sql', 'CREATE TABLE `items` (`id` int NOT NULL AUTO_INCREMENT, `sku` varchar(20) NOT NULL, `price` int, PRIMARY KEY (`id`), KEY `idx_sku` (`sku`)) ENGINE=InnoDB;\nALTER TABLE items ADD INDEX idx_price (price);\nALTER TABLE items ADD CONSTRAINT uq UNIQUE (sku, price);\nSET NAMES utf8;', 'mysql'), { ok: true });
      assert.deepEqual(my.indexes.map((i) => `${i.kind} ${i.table}(${i.columns.join(',')})`), ['primary key items(id)', 'index items(sku)', 'index items(price)', 'unique items(sku,price)']);
      assert.equal(my.otherStatements, 1);
      assert.equal(my.tables.get('items')!.columns.get('sku')!.type, 'VARCHAR');
      const pg = emptySchema();
      assert.deepEqual(addDdl(pg, 'p.sql', 'CREATE TABLE t (a int, b text UNIQUE);\nALTER TABLE ONLY t ADD CONSTRAINT t_pkey PRIMARY KEY (a);\nCOMMENT ON TABLE t IS \'x\';', 'postgresql'), { ok: true });
      assert.deepEqual(pg.indexes.map((i) => `${i.kind} ${i.columns.join(',')} line ${i.line}`), ['unique b line 1', 'primary key a line 2']);
      const bad = addDdl(emptySchema(), 'bad.sql', 'CREATE TABLE ok (a int);\n\nCREATE TABLE broken (a int,,);', 'postgresql');
      assert.ok(!bad.ok && bad.line === 3, JSON.stringify(bad));
    });

    it('composite prefix: (a) is served by (a, b); (b) and (a, c) are not; equality parts in any order', () => {
      assert.ok(indexCovers(['a', 'b'], ['a']));
      assert.ok(!indexCovers(['a', 'b'], ['b']));
      assert.ok(!indexCovers(['a', 'b'], ['a', 'c']));
      assert.ok(indexCovers(['b', 'a', 'c'], ['a', 'b', 'c'], 2));
      assert.ok(!indexCovers(['b', 'c', 'a'], ['a', 'b', 'c'], 2));
    });

    it('code: queries in strings and templates passed to query(), database calls inside loops and iteration callbacks', () => {
      const src = [
        'async function f(db, xs) {',
        '  const all = await db.query("SELECT id FROM t WHERE a = $1", [1]);',
        '  for (const x of await db.query("SELECT id FROM t")) {}',
        '  for (const x of xs) { await db.query(`SELECT b FROM t WHERE id = ${x}`); }',
        '  xs.forEach(async (x) => { await prisma.user.findUnique({ where: { id: x } }); });',
        '  while (more()) await knex.raw("DELETE FROM t WHERE id = ?", [1]);',
        '  const m = new Map(); m.get("SELECT x FROM y");',
        '}',
      ].join('\n');
      const r = scanCode('a.ts', src, 'postgresql');
      assert.deepEqual(r.queries.map((q) => [q.line, q.call, q.sql, q.dynamic]), [
        [2, 'query', 'SELECT id FROM t WHERE a = $1', false], [3, 'query', 'SELECT id FROM t', false], [4, 'query', 'SELECT b FROM t WHERE id = $1', true],
        [6, 'raw', 'DELETE FROM t WHERE id = ?', false], [7, 'get', 'SELECT x FROM y', false],
      ]);
      assert.deepEqual(r.loops.map((l) => [l.line, l.call, l.loop]), [[4, 'db.query', 'for...of loop'], [5, 'prisma.user.findUnique', '.forEach callback'], [6, 'knex.raw', 'while loop']],
        'the query in the for...of header runs once: not an N+1');
    });

    it('a file is parsed only when it holds SQL text or a database-looking call; the dialect is guessed from the text', () => {
      assert.ok(!mayQuery("router.get('/users', (req, res) => res.json(store.get(req.params.id)));\napp.run();"), 'an Express router opens nothing');
      assert.ok(mayQuery('await prisma.user.findMany({ where: { active: true } });'));
      assert.ok(mayQuery('const q = "SELECT id\n  FROM users";'));
      assert.equal(guessDialect('CREATE TABLE `t` (id int AUTO_INCREMENT)'), 'mysql');
      assert.equal(guessDialect('CREATE TABLE t (id serial)'), 'postgresql');
    });

    it('implicit casts both ways, given the column types; functions on an unindexed column are left when the schema says so', () => {
      const s = emptySchema();
      addDdl(s, 's.sql', 'CREATE TABLE items (id int PRIMARY KEY, sku varchar(20), price int, note text);', 'mysql');
      const q = "SELECT id FROM items WHERE sku = 12345 AND price = '10' AND upper(note) = 'X' AND abs(id) = 1";
      const p = parseStatement(q, 'mysql');
      assert.ok(p.ok);
      const a = analyzeQuery(p.ast, q, { file: 'q.sql', line: 1, via: 'sql-file' }, s, 1);
      assert.deepEqual(a.findings.map((f) => `${f.rule}: ${f.message.split(':')[0]}`).sort(), [
        'function-on-column: abs(id) in a predicate', 'implicit-cast: price is INT but is compared with the string \'10\'', 'implicit-cast: sku is VARCHAR but is compared with a number',
      ]);
    });
  });

  describe('analyze-queries', () => {
    it('finds every planted anti-pattern with its file and line, in the .sql file and in the code', async () => {
      const { artifact, proposed, evidence } = await run('analyze-queries', ws('planted'));
      assert.equal(artifact.unable, undefined, artifact.summary);
      const d = artifact.data as AnalyzeQueriesData;
      assert.deepEqual(where(d), [
        'delete-without-where db/queries.sql:6',
        'function-on-column db/queries.sql:10',
        'implicit-cast db/queries.sql:12',
        'leading-wildcard-like db/queries.sql:8',
        'leading-wildcard-like src/orders.js:17',
        'n-plus-one src/orders.js:13',
        'n-plus-one src/orders.js:6',
        'select-star db/queries.sql:2',
        'update-without-where db/queries.sql:4',
      ]);
      assert.equal(d.findings[0]!.severity, 'high');
      assert.match(d.findings.find((f) => f.rule === 'function-on-column')!.message, /^lower\(email\) in a predicate: the index users_email_key on users\(email\) cannot be used/);
      assert.match(d.findings.find((f) => f.rule === 'n-plus-one' && f.line === 6)!.message, /^db\.query\(\) inside a for\.\.\.of loop \(line 5\)/);
      const tpl = d.findings.find((f) => f.rule === 'leading-wildcard-like' && f.file === 'src/orders.js')!;
      assert.match(tpl.message, /^LIKE '%\$\{\.\.\.\}' starts with a wildcard/);
      assert.equal(tpl.query, "SELECT id, name FROM users WHERE name LIKE '%${term}'", 'the query as the code wrote it');
      assert.equal(d.dialect, 'postgresql');
      assert.equal(d.examined.schemaFrom, 'workspace .sql DDL (db/schema.sql)');
      assert.deepEqual([d.examined.fromSql, d.examined.fromCode, d.examined.skipped.length], [9, 3, 0]);
      assert.deepEqual(artifact.findingsAfter, { count: 9, maxSeverity: 3 });
      assert.ok(artifact.confidence >= 0.75, String(artifact.confidence));
      assert.deepEqual(proposed.map((p) => p.kind), ['read', 'analyze']);
      assert.deepEqual([...evidence.pathsRead].sort(), ['db/queries.sql', 'db/schema.sql', 'src/orders.js']);
      const check = analyzeQueriesSkill.outputSchema!.safeParse(artifact.data);
      assert.ok(check.success, check.success ? '' : check.error.message);
    });

    it('the clean twin raises nothing and says what it examined', async () => {
      const { artifact } = await run('analyze-queries', ws('clean'));
      const d = artifact.data as AnalyzeQueriesData;
      assert.deepEqual(d.findings, []);
      assert.match(artifact.summary, /^nothing found: examined 8 queries \(7 from 2 \.sql file\(s\), 1 from 1 JS\/TS file\(s\)\), schema of 2 table\(s\) and 6 index\(es\)/);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    });

    it('named files only; an unparseable statement is needs input with file and line; an unknown type, an outside path too', async () => {
      const dir = ws('planted');
      const only = await run('analyze-queries', dir, { files: ['src/orders.js'] });
      assert.deepEqual(where(only.artifact.data as AnalyzeQueriesData), ['leading-wildcard-like src/orders.js:17', 'n-plus-one src/orders.js:13', 'n-plus-one src/orders.js:6']);
      writeFileSync(path.join(dir, 'broken.sql'), 'SELECT 1;\n\nSELECT a FROM WHERE b = 1;\n');
      const bad = await run('analyze-queries', dir, { files: 'broken.sql' });
      assert.deepEqual(bad.artifact.needsInput, { field: 'files' });
      assert.match(bad.artifact.unable!, /^broken\.sql:3: PostgreSQL syntax error/);
      const other = await run('analyze-queries', dir, { files: ['README.md'] });
      assert.equal(other.artifact.unable, 'input.files: README.md is neither a .sql file nor a JS/TS source; not read');
      const outside = await run('analyze-queries', dir, { files: [path.join(FIX, 'clean', 'db', 'queries.sql')] });
      assert.deepEqual(outside.artifact.needsInput, { field: 'files' });
      assert.match(outside.artifact.unable!, /clean\/db\/queries\.sql is outside the workspace; not read$/);
      const dialect = await run('analyze-queries', dir, { dialect: 'oracle' });
      assert.deepEqual(dialect.artifact.needsInput, { field: 'dialect' });
    });

    it('a .sql file symlinked from outside the workspace is never read, found or named', async () => {
      const outside = ws();
      writeFileSync(path.join(outside, 'secret.sql'), 'DELETE FROM OUTSIDE_MARKER_TABLE;\n');
      const dir = ws('clean');
      symlinkSync(path.join(outside, 'secret.sql'), path.join(dir, 'db', 'leak.sql'));
      const found = await run('analyze-queries', dir);
      assert.ok(!JSON.stringify(found.artifact).includes('OUTSIDE_MARKER'), 'no outside content in the artifact');
      assert.deepEqual((found.artifact.data as AnalyzeQueriesData).findings, []);
      const named = await run('analyze-queries', dir, { files: ['db/leak.sql'] });
      assert.deepEqual(named.artifact.needsInput, { field: 'files' });
      assert.equal(named.artifact.unable, 'input.files: db/leak.sql is outside the workspace; not read');
    });

    it('a workspace with no SQL and no query in code is not applicable, naming where it looked', async () => {
      const dir = ws();
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'src', 'index.js'), 'module.exports = (a, b) => a + b;\n');
      const { artifact } = await run('analyze-queries', dir);
      assert.equal(artifact.notApplicable, 'no SQL query to analyze: looked for input.files, *.sql and JS/TS sources in the workspace (not node_modules, .git, dist, build) (read 0 .sql and 1 JS/TS file(s): no query in them)');
    });
  });

  describe('indexes', () => {
    it('suggests indexes for the planted predicates, never one the schema has (the composite prefix included)', async () => {
      const { artifact } = await run('indexes', ws('planted'), { schema: 'db/schema.sql' });
      assert.equal(artifact.unable, undefined, artifact.summary);
      const d = artifact.data as IndexesData;
      assert.deepEqual(d.suggestions.map((s) => [s.ddl, s.queries.join(' ')]), [
        ['CREATE INDEX CONCURRENTLY idx_orders_created_at ON orders (created_at);', 'db/queries.sql:14'],
        ['CREATE INDEX CONCURRENTLY idx_orders_status_user_id ON orders (status, user_id);', 'db/queries.sql:22'],
        ['CREATE INDEX CONCURRENTLY idx_users_status ON users (status);', 'db/queries.sql:14'],
      ]);
      const served = d.alreadyServed.map((s) => `${s.table}(${s.columns.join(',')}) ${s.by.split(' ')[0]}`);
      assert.ok(served.includes('orders(user_id) orders_user_created'), 'orders(user_id) is the prefix of orders_user_created (user_id, created_at)');
      assert.ok(served.includes('users(email) users_email_key') && served.includes('users(id) users_pkey'));
      assert.equal(d.examined.schemaFrom, 'input.schema');
      assert.deepEqual(artifact.findingsAfter, { count: 3, maxSeverity: 2 });
      assert.match(artifact.summary, /^3 index\(es\) to add: orders\(created_at\) for db\/queries\.sql:14/);
      const check = indexesSkill.outputSchema!.safeParse(artifact.data);
      assert.ok(check.success, check.success ? '' : check.error.message);
    });

    it('the clean twin: every candidate is already served, nothing to add', async () => {
      const { artifact } = await run('indexes', ws('clean'), { schema: 'db/schema.sql' });
      const d = artifact.data as IndexesData;
      assert.deepEqual(d.suggestions, []);
      assert.ok(d.alreadyServed.length >= 5);
      assert.match(artifact.summary, /^nothing to add: \d+ candidate\(s\) already served by the schema's indexes; examined/);
    });

    it('a MySQL dump: the grammar guessed, the text column compared with a number found, the composite key prefix respected', async () => {
      const dir = ws();
      cpSync(path.join(FIX, 'mysql'), dir, { recursive: true });
      const q = await run('analyze-queries', dir);
      const qd = q.artifact.data as AnalyzeQueriesData;
      assert.equal(qd.dialect, 'mysql');
      assert.deepEqual(qd.findings.map((f) => `${f.rule} ${f.severity} ${f.file}:${f.line}`), ['implicit-cast medium queries.sql:2']);
      const ix = await run('indexes', dir, { schema: 'schema.sql', files: ['queries.sql'] });
      const d = ix.artifact.data as IndexesData;
      assert.deepEqual(d.suggestions.map((s) => [s.ddl, s.queries.join(' ')]), [['CREATE INDEX idx_products_name ON products (name);', 'queries.sql:11']]);
      assert.deepEqual(d.alreadyServed.map((s) => `${s.table}(${s.columns.join(',')}) ${s.by.split(' ')[0]}`).sort(), [
        'products(category_id) idx_category_price', 'products(category_id,price) idx_category_price', 'products(sku) uq_sku',
      ]);
    });

    it('a table the schema lacks is never suggested; no schema at all is needs input naming schema', async () => {
      const dir = ws();
      writeFileSync(path.join(dir, 'q.sql'), 'SELECT id FROM audit WHERE actor = $1;\n');
      const none = await run('indexes', dir);
      assert.deepEqual(none.artifact.needsInput, { field: 'schema' });
      writeFileSync(path.join(dir, 'schema.sql'), 'CREATE TABLE users (id int PRIMARY KEY);\n');
      const r = await run('indexes', dir, { schema: 'schema.sql', files: ['q.sql'] });
      const d = r.artifact.data as IndexesData;
      assert.deepEqual(d.suggestions, []);
      assert.deepEqual(d.unknown.map((u) => `${u.table}(${u.columns.join(',')}): ${u.why}`), ['audit(actor): table not in the schema']);
    });
  });
});

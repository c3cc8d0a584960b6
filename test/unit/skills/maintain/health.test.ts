import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  checkHealth, jsonErrorOffset, ManifestError, parseGoMod, parsePackageLockRoot, parsePnpmLockRoot, parseRequirements, parseYarnLockSpecs, pySatisfies,
} from '../../../../server/src/skills/maintain/index';
import { WorkspaceFiles } from '../../../../server/src/skills/workspace/files';

const FIX = path.resolve(__dirname, '../../../fixtures/maintain');
const health = (dir: string, running = 'v20.11.1') => checkHealth(new WorkspaceFiles(path.join(FIX, dir)), '', running);
const where = (f: { kind: string; file: string; line: number | null; package: string | null }) => `${f.kind} ${f.file}:${f.line} ${f.package ?? ''}`.trim();

describe('maintain-ai health: lock-file drift and engines mismatch', () => {
  it('finds every planted drift of an npm project with package-lock v3, each with file and line', () => {
    const h = health('npm-drift');
    assert.deepEqual(h.findings.map(where), [
      'lock-unsatisfied package-lock.json:30 express',
      'engines-running package.json:10 node',
      'lock-missing package.json:15 left-pad',
      'engines-pinned .nvmrc:1 node',
      'lock-stale-range package-lock.json:11 chalk',
      'lock-extraneous package-lock.json:14 request',
    ]);
    assert.match(h.findings[0]!.message, /locked at 4\.17\.3, outside the range \^4\.18\.0 of package\.json:14/);
    assert.deepEqual(h.examined.files, ['package.json', 'package-lock.json', '.nvmrc']);
    assert.equal(h.examined.directDependencies, 6);
  });

  it('the clean twin raises nothing and says what it examined', () => {
    const h = health('npm-clean');
    assert.deepEqual(h.findings, []);
    assert.deepEqual(h.examined.files, ['package.json', 'package-lock.json', '.nvmrc']);
    assert.deepEqual(h.node, { running: 'v20.11.1', engines: '>=18', pinned: [{ file: '.nvmrc', version: '20' }] });
  });

  it('the running node is what engines.node is judged against: node 16 satisfies >=14 <18', () => {
    assert.ok(!health('npm-drift', 'v16.20.2').findings.some((f) => f.kind === 'engines-running'));
    assert.ok(health('npm-clean', 'v16.20.2').findings.some((f) => f.kind === 'engines-running' && f.line === 6));
  });

  it('yarn.lock: a package.json range with no `name@range` entry is drift; a matching quoted spec is not', () => {
    const h = health('yarn-drift');
    assert.deepEqual(h.findings.map(where), ['lock-missing package.json:5 lodash']);
    assert.match(h.findings[0]!.message, /no entry for "lodash@\^4\.17\.21" in yarn\.lock/);
  });

  it('pnpm-lock.yaml v9: an unsatisfied version and a stale specifier, at the lock lines', () => {
    assert.deepEqual(health('pnpm-drift').findings.map(where), ['lock-unsatisfied pnpm-lock.yaml:11 express', 'lock-stale-range pnpm-lock.yaml:15 lodash']);
  });

  it('requirements.txt vs poetry.lock: a pin the lock breaks and a requirement the lock lacks; the clean twin raises nothing', () => {
    const h = health('python-drift');
    assert.deepEqual(h.findings.map(where), ['lock-unsatisfied poetry.lock:3 flask', 'lock-missing requirements.txt:5 Django']);
    assert.deepEqual(h.examined.notCompared, ['requirements.txt:6: option -r not followed']);
    assert.deepEqual(health('python-clean').findings, []);
  });

  it('go.mod vs go.sum: the required module without a go.sum line is named at its go.mod line', () => {
    assert.deepEqual(health('go-drift').findings.map(where), ['go-sum-missing go.mod:7 github.com/gorilla/mux']);
  });

  it('parsers name file and line of what they cannot read', () => {
    assert.throws(() => parsePackageLockRoot('package-lock.json', '{\n  "lockfileVersion": 3,\n  "packages": {\n}'), (e: unknown) => e instanceof ManifestError && e.message === 'package-lock.json:4: not valid JSON');
    assert.throws(() => parsePackageLockRoot('package-lock.json', '{\n  "lockfileVersion": 7\n}'), /package-lock\.json:2: unknown lockfileVersion 7/);
    assert.throws(() => parseYarnLockSpecs('yarn.lock', 'lodash@^4:\n  version "4.17.21"\nnot an entry\n'), /yarn\.lock:3: not a yarn\.lock entry header/);
    assert.throws(() => parsePnpmLockRoot('pnpm-lock.yaml', 'lockfileVersion: "9.0"\nimporters: [a\n'), /pnpm-lock\.yaml:\d+: not valid YAML/);
    assert.throws(() => parseRequirements('requirements.txt', 'flask==2.0\nrequests>>2\n'), /requirements\.txt:2: unreadable version specifier/);
    assert.throws(() => parseGoMod('go.mod', 'module x\nrequire (\n  a v1\n'), /go\.mod:4: require block not closed/);
  });

  it('jsonErrorOffset finds the first syntax error where V8 does not say, and nothing in valid JSON', () => {
    assert.equal(jsonErrorOffset('{"a": [1, 2], "b": {"c": "\\u00e9"}, "d": -1.5e3, "e": null}'), undefined);
    assert.equal(jsonErrorOffset('{"a": [1,\n}'), 10);
    assert.equal(jsonErrorOffset('{"a" 1}'), 5);
    assert.equal(jsonErrorOffset('{"a": 1} x'), 9);
    assert.equal(jsonErrorOffset('{"a": tru}'), 6);
  });

  it('PEP 440 specifiers: ranges, ~= compatible release and == prefixes', () => {
    assert.equal(pySatisfies('2.31.0', '>=2.31,<3'), true);
    assert.equal(pySatisfies('3.0.0', '>=2.31,<3'), false);
    assert.equal(pySatisfies('1.26.4', '~=1.26.0'), true);
    assert.equal(pySatisfies('1.27.0', '~=1.26.0'), false);
    assert.equal(pySatisfies('1.4.2', '==1.4.*'), true);
    assert.equal(pySatisfies('1.5.0', '==1.4.*'), false);
  });
});

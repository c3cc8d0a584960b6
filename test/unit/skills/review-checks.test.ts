import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { findSecrets } from '../../../server/src/skills/secret-rules';
import { isInside, reviewChecks } from '../../../server/src/skills/review-checks';

describe('review checks', () => {
  it('keeps paths inside the workspace, catching traversal and symlink escapes', () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-ws-'));
    const outside = mkdtempSync(path.join(tmpdir(), 'cadre-out-'));
    mkdirSync(path.join(ws, 'src'));
    symlinkSync(outside, path.join(ws, 'escape'));
    assert.equal(isInside(ws, 'src/a.ts'), true);
    assert.equal(isInside(ws, 'src/new/file.ts'), true, 'a file that does not exist yet');
    assert.equal(isInside(ws, path.join(ws, 'src')), true);
    assert.equal(isInside(ws, '../etc/passwd'), false);
    assert.equal(isInside(ws, 'src/../../x'), false);
    assert.equal(isInside(ws, '/etc/passwd'), false);
    assert.equal(isInside(ws, 'escape/secret.txt'), false, 'a symlink pointing out of the workspace');
  });

  it('parses JSON, YAML and CommonJS, and says when it has no parser', () => {
    assert.deepEqual(reviewChecks.syntax('a.json', '{"a":1}'), { ok: true, reason: 'valid JSON' });
    assert.equal(reviewChecks.syntax('a.json', '{"a":')!.ok, false);
    assert.equal(reviewChecks.syntax('a.yaml', 'a: [1, 2')!.ok, false);
    // A stream of documents (Kubernetes manifests) is valid YAML; a broken second document is not.
    assert.deepEqual(reviewChecks.syntax('k.yaml', 'kind: A\n---\nkind: B\n'), { ok: true, reason: 'valid YAML' });
    assert.equal(reviewChecks.syntax('k.yaml', 'kind: A\n---\nkind: [B\n')!.ok, false);
    assert.equal(reviewChecks.syntax('a.cjs', 'module.exports = function () { return 1; }')!.ok, true);
    assert.equal(reviewChecks.syntax('a.cjs', 'function (')!.ok, false);
    assert.equal(reviewChecks.syntax('a.rs', 'fn main() {}'), null);
  });

  it('finds provider secrets and leaves look-alikes alone', () => {
    assert.deepEqual(findSecrets('aws AKIAIOSFODNN7EXAMPLQ'), ['aws-access-key-id']);
    assert.deepEqual(findSecrets('token ghp_6SVI34Zwh8Xms9bmOxojRlO8f2NxmZQqDGcw'), ['github-token']);
    assert.deepEqual(findSecrets(`token ghp_${'a'.repeat(36)}`), [], 'a placeholder is not a secret (the scanner\'s judgement)');
    assert.deepEqual(findSecrets('-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\\n-----END OPENSSH PRIVATE KEY-----'), ['private-key']);
    assert.deepEqual(findSecrets('AKIA short, ghp_tooShort, sk_test_abc'), []);
  });
});

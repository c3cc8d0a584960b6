import { strict as assert } from 'node:assert';
import { isAllowed } from '../../../../server/src/skills/security/allowlist';
import { alphabetOf, passesEntropy, shannonEntropy } from '../../../../server/src/skills/security/entropy';
import { coverageOf, parseGitignore, redact, scanText } from '../../../../server/src/skills/security/scanner';

const ids = (text: string, file = 'a.ts') => scanText(text, file).map((f) => f.ruleId);

describe('secret scanner rules', () => {
  it('computes Shannon entropy and alphabets', () => {
    assert.equal(shannonEntropy(''), 0);
    assert.equal(shannonEntropy('aaaa'), 0);
    assert.equal(shannonEntropy('abcd'), 2);
    assert.equal(alphabetOf('deadbeef'), 'hex');
    assert.equal(alphabetOf('aZ09+/='), 'base64');
    assert.equal(alphabetOf('a b'), 'other');
    assert.equal(passesEntropy('q8Zx3LmP0vR7tY2wK9sB4nH6', false), true);
    assert.equal(passesEntropy('aaaaaaaaaaaaaaaaaaaa1', false), false);
    assert.equal(passesEntropy('Tr0ub4dor&3', true), true);
  });

  it('allow-lists documented examples and placeholders', () => {
    assert.ok(isAllowed('AKIAIOSFODNN7EXAMPLE'));
    for (const v of ['${TOKEN}', '<your-key>', 'changeme', 'xxxxxxxxxxxx', 'your_api_key_here', '{{ secret }}', 'REDACTED']) assert.ok(isAllowed(v), v);
    assert.ok(isAllowed('ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'a'.repeat(36)), 'no randomness');
    assert.ok(!isAllowed('q8Zx3LmP0vR7tY2wK9sB4nH6'));
    assert.ok(isAllowed('q8Zx3LmP0vR7tY2wK9sB4nH6', undefined, { values: [/^q8Zx/] }));
  });

  it('finds provider formats and rejects near misses', () => {
    assert.deepEqual(ids('k = "AKIAZ7Q3M5N8P2R4T6V9"'), ['aws-access-key-id']);
    assert.deepEqual(ids('k = "AKIAZ7Q3M5N8P2R4T6V"'), [], 'too short');
    assert.deepEqual(ids('t = "ghp_Zq3xV8bN1mK5tR7wY2pL9sD4fG6hJ0cA1eU3"'), ['github-token']);
    assert.deepEqual(ids('t = "glpat-Zq3xV8bN1mK5tR7wY2pL"'), ['gitlab-token']);
    assert.deepEqual(ids('t = "xoxb-123456789012-Zq3xV8bN1mK5tR7w"'), ['slack-token']);
    assert.deepEqual(ids('t = "sk_live_Zq3xV8bN1mK5tR7wY2pL9sD4"'), ['stripe-secret-key']);
    assert.deepEqual(ids('t = "sk_test_Zq3xV8bN1mK5tR7wY2pL9sD4"'), []);
    assert.deepEqual(ids('-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----'), [], 'documentation placeholder');
  });

  it('reports a provider token assigned to a secret name once, as the provider rule', () => {
    assert.deepEqual(ids('const githubToken = "ghp_Zq3xV8bN1mK5tR7wY2pL9sD4fG6hJ0cA1eU3";'), ['github-token']);
  });

  it('judges generic assignments by name, quoting and entropy', () => {
    assert.deepEqual(ids('const apiKey = "q8Zx3LmP0vR7tY2wK9sB4nH6";'), ['generic-secret']);
    assert.deepEqual(ids('"client_secret": "q8Zx3LmP0vR7tY2wK9sB4nH6"', 'a.json'), ['generic-secret']);
    assert.deepEqual(ids('const apiKey = "q8Zx3LmP0vR7tY2wK9sB4nH6"; // cadre-ignore generic-secret: rotated test value'), []);
    assert.deepEqual(ids('const monkey = "q8Zx3LmP0vR7tY2wK9sB4nH6";'), [], 'monkey is not a key');
    assert.deepEqual(ids('const keyId = "q8Zx3LmP0vR7tY2wK9sB4nH6";'), [], 'an id names, not a secret');
    assert.deepEqual(ids('const apiKey = "hello-world-value";'), [], 'low entropy, no digit');
    assert.deepEqual(ids('const token = getToken123abcXYZ;'), [], 'unquoted in code is an expression');
    assert.deepEqual(ids('TOKEN=q8Zx3LmP0vR7tY2wK9sB4nH6', '.env'), ['generic-secret']);
  });

  it('redacts', () => {
    assert.equal(redact('AKIAZ7Q3M5N8P2R4T6V9'), 'AKIA…(20 chars)');
    assert.equal(redact('short'), 's…(5 chars)');
    assert.ok(!redact('abcdefgh').includes('abcdefgh'));
  });

  it('parses simple .gitignore patterns and computes coverage', () => {
    const rules = parseGitignore('# c\n*.log\n/build/\nsecret.txt\n!keep.log\n');
    const test = (rel: string, dir = false) => rules.reduce((o, r) => (r.test(rel, dir) ? !r.negate : o), false);
    assert.equal(test('a/b.log'), true);
    assert.equal(test('keep.log'), false);
    assert.equal(test('build', true), true);
    assert.equal(test('x/secret.txt'), true);
    assert.equal(coverageOf({ filesConsidered: 10, filesScanned: 6, skipped: [{ file: 'a', reason: 'binary' }, { file: 'b', reason: 'too-large' }] }), 6 / 9);
    assert.equal(coverageOf({ filesConsidered: 0, filesScanned: 0, skipped: [] }), 0);
  });
});

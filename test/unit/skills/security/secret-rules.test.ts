import { strict as assert } from 'node:assert';
import { findSecrets, SECRET_RULES } from '../../../../server/src/skills/secret-rules';
import { buildSecurityReport } from '../../../../server/src/skills/security/skill';
import { scanText } from '../../../../server/src/skills/security/scanner';
import { SECRET_RULE_DEFS } from '../../../../server/src/skills/security/rules';
import { redactSecretsIn } from '../../../../server/src/skills/findings/redact';

const ids = (text: string, file = 'a.ts') => scanText(text, file).map((f) => f.ruleId);
const GH = 'ghp_6SVI34Zwh8Xms9bmOxojRlO8f2NxmZQqDGcw';

describe('secret rules: one table, context, deferral, redaction', () => {
  it('the gate and review redaction read the scanner\'s table (no second list)', () => {
    assert.deepEqual(SECRET_RULES.map((r) => r.id), SECRET_RULE_DEFS.filter((r) => r.check !== 'generic').map((r) => r.id));
    assert.deepEqual(findSecrets(`url = "https://ci:${GH}@github.com/o/r.git"`), ['github-token'], 'a provider token as a URL password is its provider\'s finding');
  });

  it('connection strings: real passwords found, defaults, templates and user-equals-password not', () => {
    assert.deepEqual(ids('DATABASE_URL=postgres://app:Zk3vQ9pLm2Xw@db:5432/app', '.env'), ['url-credentials']);
    assert.deepEqual(ids('REDIS_URL=redis://:Zk3vQ9pLm2Xw@cache:6379', '.env'), ['url-credentials']);
    assert.deepEqual(ids('AMQP=amqp://guest:guest@localhost:5672', '.env'), []);
    assert.deepEqual(ids('DB=postgres://app:app@localhost/app', '.env'), []);
    assert.deepEqual(ids('DB=postgres://app:${DB_PASSWORD}@db/app', '.env'), []);
    assert.deepEqual(ids('DB=postgres://app:%s@db/app', '.env'), []);
    assert.deepEqual(ids('"Server=db;Database=x;User ID=sa;Password=Zk3vQ9pLm2Xw;"', 'a.json'), ['connection-string-password']);
    assert.deepEqual(ids('"Server=db;Database=x;Trusted_Connection=True;"', 'a.json'), []);
    assert.deepEqual(ids('url=jdbc:mysql://db:3306/x?user=a&password=Zk3vQ9pLm2Xw', 'app.properties'), ['jdbc-password']);
  });

  it('.env unquoted values with ! # . ~ @ are whole values; code needs quotes', () => {
    const f = scanText('SMTP_PASSWORD=Tr0ub4dor&3.x!#~@9\n', '.env');
    assert.deepEqual(f.map((x) => x.ruleId), ['generic-secret']);
    assert.equal(f[0]!.range.endColumn - f[0]!.range.startColumn, 'Tr0ub4dor&3.x!#~@9'.length);
    assert.deepEqual(ids('const password = getPassword123abc!;'), []);
  });

  it('names that are not secrets, digests and integrity hashes are left alone', () => {
    assert.deepEqual(ids('TLS_KEY_FILE=/etc/ssl/private/k3y.pem\nGPG_KEY_SIZE=4096\nAPI_KEY_ID=Zk3vQ9pLm2XwZk3vQ9pLm2Xw\n', '.env'), []);
    assert.deepEqual(ids('"integrity": "sha512-Zk3vQ9pLm2XwZk3vQ9pLm2XwZk3vQ9pLm2XwZk3vQ9pLm2XwZk3vQ9pLm2Xw=="', 'package-lock.json'), []);
    assert.deepEqual(ids('const cacheKey = "session-key-5f4dcc3b5aa765d61d8327deb882cf99";'), [], 'a key name with a digest is not a Mailgun key');
  });

  it('a one-line escaped PEM without an END line is still key material, never shown', () => {
    const body = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj';
    const f = scanText(`{"private_key": "-----BEGIN PRIVATE KEY-----\\n${body}\\n${body}`, 'sa.json');
    assert.equal(f[0]?.ruleId, 'private-key');
    assert.ok(!f[0]!.snippet!.includes(body.slice(4, 20)) && !f[0]!.message.includes(body.slice(4, 20)));
  });

  it('the report sweeps every analyzer\'s snippet (an IaC line with a URL password)', () => {
    const finding = { ruleId: 'docker/verification-disabled', severity: 'high' as const, message: 'curl -k', file: 'Dockerfile',
      range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 }, fingerprint: 'f', snippet: 'RUN curl -k https://deploy:Zk3vQ9pLm2Xw@repo.internal/a.tgz' };
    const report = buildSecurityReport({ findings: [finding], suppressed: [], filesConsidered: 1, filesScanned: 1, bytesScanned: 1, skipped: [] }, undefined);
    assert.ok(!JSON.stringify(report).includes('Zk3vQ9pLm2Xw'));
    assert.equal(redactSecretsIn(`x ${GH} y`), 'x ghp_…(40 chars) y');
    assert.equal(redactSecretsIn(redactSecretsIn(`Password=Zk3vQ9pLm2Xw; Server=x;Password=Zk3vQ9pLm2Xw;`)), redactSecretsIn(`Password=Zk3vQ9pLm2Xw; Server=x;Password=Zk3vQ9pLm2Xw;`), 'a redaction is not redacted again');
  });

  it("a snippet passes the secrets-clean gate: the same secret twice on a line, a generic assignment beside a finding (security-ai scanning Cadre's own tests failed its gate)", () => {
    // The test line that did it: the finding is the connection string's password; the same value sits unredacted at the start.
    const line = 'assert.equal(f(`Password=Zk3vQ9pLm2Xw; Server=x;Password=Zk3vQ9pLm2Xw;`), 1);';
    const found = scanText(line, 'src/app.ts');
    assert.ok(found.length > 0, 'the connection string is found');
    for (const f of found) assert.ok(!f.snippet!.includes('Zk3vQ9pLm2Xw'), `scanner snippet: ${f.snippet}`);
    const finding = { ruleId: 'code/x', severity: 'low' as const, message: 'm', file: 'a.ts', range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 }, fingerprint: 'f', snippet: 'const password = "Zk3vQ9pLm2XwQ7r";' };
    const report = buildSecurityReport({ findings: [finding], suppressed: [], filesConsidered: 1, filesScanned: 1, bytesScanned: 1, skipped: [] }, undefined);
    assert.deepEqual(findSecrets(report.findings[0]!.snippet!), [], report.findings[0]!.snippet);
  });
});

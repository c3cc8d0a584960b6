import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { toDiagnostic } from '../../../../server/src/lsp/diagnostics';
import { RULE_DOCS_PAGE, ruleAnchor } from '../../../../server/src/skills/findings/rule-docs';
import { toSarif } from '../../../../server/src/skills/findings/sarif';
import { CODE_ANALYSIS_RULES } from '../../../../server/src/skills/code-analysis/rules';
import { IAC_RULES } from '../../../../server/src/skills/security/iac';
import { DOCUMENTED_RULE_IDS, helpUriFor } from '../../../../server/src/skills/security/rule-help';
import { SECRET_RULE_DEFS } from '../../../../server/src/skills/security/rules';

const DOCS = readFileSync(path.resolve(__dirname, '../../../../docs/skills.md'), 'utf8');
const anchors = new Set([...DOCS.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));

describe('rule help links resolve to docs/skills.md anchors', () => {
  it('every secret, IaC and code-analysis rule has a help link to an anchor that exists in docs/skills.md', () => {
    const rules = [...SECRET_RULE_DEFS, ...IAC_RULES, ...CODE_ANALYSIS_RULES];
    assert.equal(DOCUMENTED_RULE_IDS.size, rules.length, 'rule ids are unique');
    for (const r of rules) {
      assert.equal(r.helpUri, `${RULE_DOCS_PAGE}#${ruleAnchor(r.id)}`, r.id);
      const fragment = new URL(r.helpUri!).hash.slice(1);
      assert.ok(anchors.has(fragment), `docs/skills.md has <a id="${fragment}"> for ${r.id}`);
      assert.ok(new RegExp(`<a id="${fragment}"></a>\`${r.id.replace(/[/.]/g, '\\$&')}\``).test(DOCS), `the anchor of ${r.id} sits on its row`);
    }
    assert.equal(new Set(rules.map((r) => ruleAnchor(r.id))).size, rules.length, 'anchors are unique');
  });

  it('SARIF and diagnostics carry the link for documented rules and none for others', () => {
    const finding = (ruleId: string) => ({ ruleId, severity: 'high' as const, message: 'm', file: 'a.ts', range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 }, fingerprint: 'f' });
    const log = toSarif([finding('aws-access-key-id'), finding('k8s/privileged'), finding('review/long-function')], [...SECRET_RULE_DEFS, ...IAC_RULES]) as any;
    const byId = new Map<string, any>(log.runs[0].tool.driver.rules.map((r: any) => [r.id, r]));
    assert.equal(byId.get('k8s/privileged').helpUri, `${RULE_DOCS_PAGE}#k8s-privileged`);
    assert.equal(byId.get('review/long-function').helpUri, undefined);
    assert.equal(toDiagnostic(finding('tf/open-ingress')).codeDescription?.href, `${RULE_DOCS_PAGE}#tf-open-ingress`);
    assert.equal(toDiagnostic(finding('code/sql-injection')).codeDescription?.href, `${RULE_DOCS_PAGE}#code-sql-injection`);
    assert.equal(toDiagnostic(finding('review/eval')).codeDescription?.href, `${RULE_DOCS_PAGE}#review-eval`);
    assert.equal(toDiagnostic(finding('review/long-function')).codeDescription, undefined, 'a rule without an anchor gets no link');
    assert.equal(helpUriFor('generic-secret'), `${RULE_DOCS_PAGE}#generic-secret`);
  });

  it('redacts a secret that reached a message on the way out (SARIF, diagnostics)', () => {
    const key = 'ghp_6SVI34Zwh8Xms9bmOxojRlO8f2NxmZQqDGcw';
    const f = { ruleId: 'x', severity: 'high' as const, message: `token ${key} found`, snippet: `t = "${key}"`, file: 'a.ts', range: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 }, fingerprint: 'f' };
    const sarif = JSON.stringify(toSarif([f]));
    assert.ok(!sarif.includes(key) && sarif.includes('ghp_…(40 chars)'));
    assert.ok(!JSON.stringify(toDiagnostic(f).message).includes(key));
  });
});

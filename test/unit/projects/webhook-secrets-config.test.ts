import { strict as assert } from 'node:assert';
import { parseConfig } from '../../../server/src/config/load';
import { receiverSecret } from '../../../server/src/http/routes/inbound-webhooks';

const PD = (secret: string) => `integrations:
  incident_management:
    enabled: true
    routing_key: \${R}
    webhooks:
      enabled: true
      endpoint: https://cadre.example.com/webhooks/pagerduty
      secret: ${secret}
`;

describe('inbound webhook secrets in the configuration', () => {
  it('an inline secret is refused with the file, line and the rule', () => {
    assert.throws(() => parseConfig(PD('plaintext'), '/w/.cadre.yaml', { R: 'r' }), /\.cadre\.yaml:8:\d+: integrations\.incident_management\.webhooks\.secret: secret values must come from the environment/);
  });

  it('a ${VAR} secret is read from the environment and used by the receiver', () => {
    const c = parseConfig(PD('${PD_SECRET}'), '/w/.cadre.yaml', { R: 'r', PD_SECRET: 's3cr3t' });
    assert.deepEqual(receiverSecret(c, 'pagerduty'), { secret: 's3cr3t' });
  });

  it('a receiver without its secret, or of a disabled integration, or unknown, is off with the reason', () => {
    const noSecret = parseConfig('integrations:\n  tracker:\n    enabled: true\n    base_url: https://a.atlassian.net\n    auth:\n      api_token: ${T}\n', '/w/.cadre.yaml', { T: 't' });
    assert.match((receiverSecret(noSecret, 'jira') as { off: string }).off, /webhooks\.secret is not set/);
    assert.match((receiverSecret(parseConfig('', '/w/.cadre.yaml', {}), 'pagerduty') as { off: string }).off, /not enabled/);
    assert.match((receiverSecret(noSecret, 'opsgenie') as { off: string }).off, /no receiver/);
  });
});

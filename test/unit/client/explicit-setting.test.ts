import { strict as assert } from 'node:assert';
import { explicitValue } from '../../../client/src/explicit-setting';

describe('editor settings: only what the user set is sent to the server', () => {
  it('an unset setting (only its declared default) is undefined: the configuration files decide', () => {
    assert.equal(explicitValue(undefined), undefined);
    assert.equal(explicitValue({}), undefined);
    // inspect() also reports the declared default; it is not a value the user set.
    const inspected: { defaultValue: string; globalValue?: string } = { defaultValue: 'core' };
    assert.equal(explicitValue(inspected), undefined);
  });

  it('the narrowest level the user set wins: folder over workspace over user', () => {
    assert.equal(explicitValue({ globalValue: 'pro' }), 'pro');
    assert.equal(explicitValue({ globalValue: 'pro', workspaceValue: 'ultra' }), 'ultra');
    assert.equal(explicitValue({ globalValue: 'pro', workspaceValue: 'ultra', workspaceFolderValue: 'core' }), 'core');
  });
});

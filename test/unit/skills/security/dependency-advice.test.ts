import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { advisoryAffects, matchAdvisories, type OsvRecord } from '../../../../server/src/skills/security/dependencies';
import { matchNpmAdvisories } from '../../../../server/src/skills/security/npm-advisories';
import { firstOutside, fixInLine, parseNpmRange } from '../../../../server/src/skills/security/semver';

// The OSV record lists the 3.x range first and every affected version: the old advice took the first
// fixed event of the record (3.1.1) for a 2.x user.
const NODE_FETCH = JSON.parse(readFileSync(path.resolve(__dirname, '../../../fixtures/deps/node-fetch/GHSA-r683-j2x4-v87g.json'), 'utf8')) as OsvRecord;

describe('dependency advice: the fixed version of the user\'s major line', () => {
  it('node-fetch 2.x gets 2.6.7, 3.x gets 3.1.1, fixed versions are not affected', () => {
    assert.deepEqual(advisoryAffects(NODE_FETCH, 'node-fetch', '2.6.1'), { affected: true, fixed: '2.6.7' });
    assert.deepEqual(advisoryAffects(NODE_FETCH, 'node-fetch', '1.7.3'), { affected: true, fixed: '2.6.7' }, 'the 1.x line has no fix of its own: the lowest fix above');
    assert.deepEqual(advisoryAffects(NODE_FETCH, 'node-fetch', '3.0.0'), { affected: true, fixed: '3.1.1' });
    assert.deepEqual(advisoryAffects(NODE_FETCH, 'node-fetch', '2.6.7'), { affected: false });
    assert.deepEqual(advisoryAffects(NODE_FETCH, 'node-fetch', '3.2.10'), { affected: false });
  });

  it('the finding says so', () => {
    const f = matchAdvisories([{ name: 'node-fetch', version: '2.6.1', path: 'node_modules/node-fetch', line: 12 }], [NODE_FETCH], 'package-lock.json');
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /fixed in 2\.6\.7, upgrade to 2\.6\.7 or later \(same major line 2\.x\)/);
    assert.doesNotMatch(f[0]!.message, /3\.1\.1/);
  });

  it('the npm registry\'s bulk advisory: the upper bound of the alternative holding the version', () => {
    const adv = { id: 1067418, title: 'node-fetch forwards secure headers to untrusted sites', severity: 'high', vulnerable_versions: '<2.6.7 || >=3.0.0 <3.1.1', url: 'https://github.com/advisories/GHSA-r683-j2x4-v87g' };
    const m = matchNpmAdvisories([{ name: 'node-fetch', version: '2.6.1', path: 'node_modules/node-fetch' }], new Map([['node-fetch', [adv]]]), 'package-lock.json');
    assert.match(m.findings[0]!.message, /upgrade to 2\.6\.7 or later/);
    const m3 = matchNpmAdvisories([{ name: 'node-fetch', version: '3.0.0', path: 'node_modules/node-fetch' }], new Map([['node-fetch', [adv]]]), 'package-lock.json');
    assert.match(m3.findings[0]!.message, /upgrade to 3\.1\.1 or later/);
  });

  it('fixInLine and firstOutside (semver package underneath)', () => {
    assert.equal(fixInLine('2.6.1', ['3.1.1', '2.6.7']), '2.6.7');
    assert.equal(fixInLine('4.0.0', ['3.1.1', '2.6.7']), undefined);
    assert.equal(fixInLine('2.6.1', ['1.2.3', '2.6.7', '2.7.0']), '2.6.7');
    assert.equal(firstOutside('2.6.1', parseNpmRange('<2.6.7 || >=3.0.0 <3.1.1')!), '2.6.7');
    assert.equal(firstOutside('1.0.0', parseNpmRange('>=0.1.0')!), undefined, 'no upper bound: no version to name');
  });
});

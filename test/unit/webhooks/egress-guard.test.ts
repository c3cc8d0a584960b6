import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { classifyAddress } from '../../../server/src/net/address-class';
import { request } from 'undici';
import { addressRefusal, destinationRefusal, EgressRefused, guardedAgent, guardedLookup, STRICT_EGRESS, urlRefusal } from '../../../server/src/net/egress-guard';

const DEV = { allowLoopback: true, allowPrivate: false, allowHttp: true };

describe('SSRF address classifier', () => {
  const table: Array<[string, ReturnType<typeof classifyAddress>]> = [
    ['8.8.8.8', 'public'], ['93.184.216.34', 'public'],
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['172.32.0.1', 'public'], ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'], ['100.127.255.255', 'cgnat'], ['100.128.0.1', 'public'],
    ['169.254.1.1', 'link-local'], ['169.254.169.254', 'metadata'],
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'reserved'], ['224.0.0.1', 'multicast'], ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'], ['::', 'unspecified'], ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'], ['fd00:ec2::254', 'metadata'], ['ff02::1', 'multicast'], ['2606:4700::1111', 'public'],
    // IPv4-mapped / compatible / NAT64 forms of v4 addresses, dotted and hex.
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:a9fe:a9fe', 'metadata'], ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'], ['::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'metadata'], ['[::1]', 'loopback'],
    ['example.com', null], ['1.2.3', null], ['1.2.3.256', null], ['1::2::3', null],
  ];
  for (const [ip, cls] of table) it(`${ip} → ${cls}`, () => assert.equal(classifyAddress(ip), cls));
});

describe('SSRF URL check (after URL parsing)', () => {
  it('normalises decimal, octal and hex IPv4 hosts before judging them', () => {
    for (const u of ['https://2130706433/', 'https://0177.0.0.1/', 'https://0x7f.1/', 'https://127.1/', 'https://[::ffff:127.0.0.1]/', 'https://[0:0:0:0:0:ffff:7f00:1]/']) {
      assert.match(urlRefusal(u, STRICT_EGRESS) ?? '', /loopback/, u);
    }
    assert.match(urlRefusal('https://0xa9fea9fe/latest/meta-data', STRICT_EGRESS) ?? '', /metadata/);
    assert.match(urlRefusal('https://[fd00:ec2::254]/', STRICT_EGRESS) ?? '', /metadata/);
    assert.match(urlRefusal('https://0x0a000001/', STRICT_EGRESS) ?? '', /private/);
  });

  it('refuses http unless allowed, other schemes always, and credentials in the URL', () => {
    assert.match(urlRefusal('http://example.com/hook', STRICT_EGRESS) ?? '', /plain http/);
    assert.equal(urlRefusal('http://example.com/hook', { ...STRICT_EGRESS, allowHttp: true }), null);
    assert.match(urlRefusal('ftp://example.com/', STRICT_EGRESS) ?? '', /scheme ftp/);
    assert.match(urlRefusal('https://u:p@example.com/', STRICT_EGRESS) ?? '', /credentials/);
    assert.match(urlRefusal('not a url', STRICT_EGRESS) ?? '', /absolute URL/);
  });

  it('allows loopback (and localhost) only with the development setting; metadata never', () => {
    assert.match(urlRefusal('https://localhost:8443/', STRICT_EGRESS) ?? '', /loopback name/);
    assert.equal(urlRefusal('http://127.0.0.1:9/', DEV), null);
    assert.equal(urlRefusal('http://localhost:9/', DEV), null);
    assert.match(urlRefusal('http://10.0.0.1/', DEV) ?? '', /private/);
    const all = { allowLoopback: true, allowPrivate: true, allowHttp: true };
    assert.equal(urlRefusal('http://10.0.0.1/', all), null);
    assert.equal(urlRefusal('http://100.64.1.1/', all), null);
    assert.match(urlRefusal('http://169.254.169.254/', all) ?? '', /never allowed/);
    assert.match(urlRefusal('http://[fe80::1]/', all) ?? '', /never allowed/);
    assert.match(addressRefusal('0.0.0.0', all) ?? '', /never allowed/);
  });

  it('judges what a name resolves to at registration', async () => {
    const fake = (addrs: string[]) => async (): Promise<LookupAddress[]> => addrs.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 }));
    assert.match(await destinationRefusal('https://hooks.example/', STRICT_EGRESS, fake(['93.184.216.34', '10.0.0.7'])) ?? '', /resolves to 10\.0\.0\.7 is a private/);
    assert.equal(await destinationRefusal('https://hooks.example/', STRICT_EGRESS, fake(['93.184.216.34'])), null);
    assert.equal(await destinationRefusal('https://unresolvable.example/', STRICT_EGRESS, async () => { throw new Error('ENOTFOUND'); }), null);
  });
});

describe('SSRF guard at connect time (lookup)', () => {
  const call = (lookup: ReturnType<typeof guardedLookup>, host: string, all: boolean) => new Promise<{ err: Error | null; result: unknown }>((resolve) => {
    (lookup as unknown as (h: string, o: object, cb: (err: Error | null, a?: unknown, f?: number) => void) => void)(host, { all }, (err, a) => resolve({ err, result: a }));
  });

  it('connects only to checked addresses: refused ones are dropped, none left is an error', async () => {
    const lookup = guardedLookup(STRICT_EGRESS, async () => [{ address: '169.254.169.254', family: 4 }, { address: '93.184.216.34', family: 4 }]);
    const one = await call(lookup, 'rebind.example', false);
    assert.equal(one.err, null);
    assert.equal(one.result, '93.184.216.34');
    const all = await call(lookup, 'rebind.example', true);
    assert.deepEqual(all.result, [{ address: '93.184.216.34', family: 4 }]);
    const bad = await call(guardedLookup(STRICT_EGRESS, async () => [{ address: '127.0.0.1', family: 4 }]), 'evil.example', false);
    assert.ok(bad.err instanceof EgressRefused);
    assert.match(bad.err.message, /loopback/);
  });

  it('a real connection to a loopback name is refused without the development setting', async () => {
    const agent = guardedAgent({ allowLoopback: false, allowPrivate: false, allowHttp: true });
    try {
      await assert.rejects(request('http://localhost:9/', { dispatcher: agent }), (err: Error & { cause?: Error }) => /loopback/.test(`${err.message} ${err.cause?.message ?? ''}`));
    } finally {
      await agent.close();
    }
  });
});

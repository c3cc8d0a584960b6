/** Parsers of test-runner and coverage reports: TAP 13/14, JUnit XML, mocha JSON, jest/vitest JSON, go test -json, lcov, istanbul json-summary and coverage-final.json. */
import { parse as parseYaml } from 'yaml';

export interface TestFailure {
  name: string;
  message: string;
  /** Where the assertion failed (else where the test is declared). */
  file?: string;
  line?: number;
  /** The values an assertion compared, as the reporter printed them. */
  expected?: string;
  actual?: string;
}

const ANSI = /\u001b\[[0-9;]*m/g;
const clip = (s: string) => (s.length > 500 ? `${s.slice(0, 500)}…` : s);
const show = (v: unknown): string | undefined => v === undefined ? undefined : clip(typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));

/**
 * Expected and actual values from an assertion message, for reporters that print them only in text:
 * node:assert (`2 !== 3`), chai (`expected 2 to equal 3`), jest/vitest (`Expected: 3` / `Received: 2`),
 * JUnit 4/5 (`expected:<3> but was:<2>`), pytest (`assert 2 == 3`), unittest (`2 != 3`).
 */
export function valuesFromMessage(text: string | undefined): { expected?: string; actual?: string } {
  if (!text) return {};
  const t = text.replace(ANSI, '');
  let m = /^\s*Expected:?\s+(.+)\n\s*Received:?\s+(.+)$/m.exec(t);
  if (m) return { expected: clip(m[1]!.trim()), actual: clip(m[2]!.trim()) };
  m = /expected:? ?<(.*?)> but was:? ?<(.*?)>/.exec(t);
  if (m) return { expected: clip(m[1]!), actual: clip(m[2]!) };
  m = /\bexpected (.+?) to (?:deeply |strictly )?(?:equal|be|eql|deep equal|have length|include) (.+?)$/m.exec(t);
  if (m) return { actual: clip(m[1]!), expected: clip(m[2]!) };
  m = /^\s*(?:E\s+)?(?:AssertionError: )?assert (.+?) == (.+?)$/m.exec(t);
  if (m) return { actual: clip(m[1]!.trim()), expected: clip(m[2]!.trim()) };
  m = /^\s*(?:AssertionError: )?(.+?) !==? (.+?)\s*$/m.exec(t);
  // node:assert puts `Expected values to be strictly equal:` before the values, on the same line in one-line reports.
  if (m && !/[:{]$/.test(m[1]!)) return { actual: clip(m[1]!.replace(/^.*\bequal:\s*/, '').trim()), expected: clip(m[2]!.trim()) };
  return {};
}

export interface TestResults {
  passed: number;
  failed: number;
  skipped: number;
  failures: TestFailure[];
  /** The report format the numbers came from. */
  format: 'tap' | 'junit' | 'mocha-json' | 'jest-json' | 'go-json' | 'text-summary';
  /** False when only part of the report could be read (e.g. a summary line without per-test detail). */
  complete: boolean;
}

export interface FileCoverage {
  file: string;
  linesFound: number;
  linesHit: number;
  /** Line coverage percent (100 for a file with no instrumented lines). */
  pct: number;
  functionsFound?: number;
  functionsHit?: number;
  uncoveredLines?: number[];
}

export interface CoverageReport {
  format: 'lcov' | 'istanbul-summary' | 'istanbul-final' | 'node-tap';
  /** Overall line coverage percent. */
  lines: number;
  files: FileCoverage[];
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const pct = (hit: number, found: number) => (found > 0 ? round2((hit / found) * 100) : 100);

// ---------------------------------------------------------------------------------------------
// TAP
// ---------------------------------------------------------------------------------------------

interface TapPoint { indent: number; ok: boolean; name: string; directive?: 'skip' | 'todo'; yaml: string[]; parent: boolean; }

function yamlValue(yaml: string[], key: string): string | undefined {
  for (let i = 0; i < yaml.length; i++) {
    const m = /^\s*([A-Za-z_]+):\s?(.*)$/.exec(yaml[i]!);
    if (!m || m[1] !== key) continue;
    let v = m[2]!.trim();
    if (v === '|-' || v === '|' || v === '>-' || v === '>') {
      const base = (/^\s*/.exec(yaml[i]!)?.[0].length ?? 0);
      const out: string[] = [];
      for (let j = i + 1; j < yaml.length; j++) {
        const ind = /^\s*/.exec(yaml[j]!)?.[0].length ?? 0;
        if (ind <= base && yaml[j]!.trim()) break;
        out.push(yaml[j]!.trim());
      }
      return out.join('\n');
    }
    if ((v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"'))) v = v.slice(1, -1).replace(/''/g, "'");
    return v;
  }
  return undefined;
}

/** A TAP point's YAML diagnostics block as data (nested `expected:` mappings included); {} when it does not parse. */
function tapDiagnostics(yaml: string[]): Record<string, unknown> {
  if (!yaml.length) return {};
  const indent = Math.min(...yaml.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length));
  try {
    const v = parseYaml(yaml.map((l) => l.slice(indent)).join('\n')) as unknown;
    return v && typeof v === 'object' ? v as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function locationOf(s: string | undefined): { file?: string; line?: number } {
  if (!s) return {};
  const m = /^(?:file:\/\/)?(.+?):(\d+)(?::\d+)?$/.exec(s.trim());
  return m ? { file: m[1]!, line: Number(m[2]) } : {};
}

/** TAP version 13/14 (node --test, tap, tape): leaf test points counted, subtest parents excluded. */
export function parseTap(text: string): TestResults | undefined {
  const lines = text.split(/\r?\n/);
  const points: TapPoint[] = [];
  const summary: Record<string, number> = {};
  let inYaml: TapPoint | undefined;
  let yamlIndent = 0;
  let sawTap = false;
  for (const raw of lines) {
    if (inYaml) {
      if (raw.trim() === '...' && (/^\s*/.exec(raw)?.[0].length ?? 0) === yamlIndent) { inYaml = undefined; continue; }
      inYaml.yaml.push(raw);
      continue;
    }
    const indent = /^\s*/.exec(raw)?.[0].length ?? 0;
    const line = raw.trim();
    if (/^TAP version \d+/.test(line) || /^1\.\.\d+/.test(line)) { sawTap = true; continue; }
    const m = /^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$/.exec(line);
    if (m) {
      sawTap = true;
      let name = m[3] ?? '';
      let directive: TapPoint['directive'];
      const d = /\s#\s*(SKIP|TODO)\b.*$/i.exec(name);
      if (d) { directive = d[1]!.toLowerCase() === 'skip' ? 'skip' : 'todo'; name = name.slice(0, d.index); }
      name = name.replace(/\\#/g, '#').trim();
      // A point is a parent when deeper points came right before it (its subtests).
      const prev = points[points.length - 1];
      const parent = !!prev && prev.indent > indent;
      points.push({ indent, ok: m[1] === 'ok', name, ...(directive ? { directive } : {}), yaml: [], parent });
      continue;
    }
    if (line === '---' && points.length && points[points.length - 1]!.indent < indent) { inYaml = points[points.length - 1]; yamlIndent = indent; continue; }
    const s = /^#\s*(tests|pass|fail|skipped|todo|cancelled)\s+(\d+)$/.exec(line);
    if (s && indent === 0) summary[s[1]!] = Number(s[2]);
  }
  if (!sawTap || (!points.length && summary['tests'] === undefined)) return undefined;
  let passed = 0, failed = 0, skipped = 0;
  const failures: TestFailure[] = [];
  for (const p of points) {
    if (p.parent) continue;
    if (p.directive) { skipped++; continue; }
    if (p.ok) { passed++; continue; }
    failed++;
    const diag = tapDiagnostics(p.yaml);
    const message = String(diag['error'] ?? diag['message'] ?? yamlValue(p.yaml, 'error') ?? yamlValue(p.yaml, 'message') ?? 'failed').trim() || 'failed';
    // The assertion's line (first stack frame in user code) before the test's declaration (`location`).
    const at = diag['at'];
    const loc = stackLocation(typeof diag['stack'] === 'string' ? `x\n${diag['stack']}` : undefined).file ? stackLocation(`x\n${String(diag['stack'])}`)
      : locationOf(typeof diag['location'] === 'string' ? diag['location'] : typeof at === 'string' ? at : at && typeof at === 'object' ? `${(at as Record<string, unknown>)['file']}:${(at as Record<string, unknown>)['line']}` : yamlValue(p.yaml, 'location'));
    // node:test and tape say expected/actual, node-tap says wanted/found.
    const expected = show(diag['expected'] ?? diag['wanted']);
    const actual = show(diag['actual'] ?? diag['found']);
    const values = expected !== undefined || actual !== undefined ? { ...(expected !== undefined ? { expected } : {}), ...(actual !== undefined ? { actual } : {}) } : valuesFromMessage(message);
    failures.push({ name: p.name, message, ...loc, ...values });
  }
  if (summary['pass'] !== undefined && summary['fail'] !== undefined) {
    // node --test's own totals are authoritative (they count leaf tests, cancelled as failed).
    passed = summary['pass'];
    failed = summary['fail'] + (summary['cancelled'] ?? 0);
    skipped = (summary['skipped'] ?? 0) + (summary['todo'] ?? 0);
  }
  return { passed, failed, skipped, failures, format: 'tap', complete: points.length > 0 };
}

// ---------------------------------------------------------------------------------------------
// A small XML reader (elements, attributes, text, entities, CDATA, comments) and JUnit XML
// ---------------------------------------------------------------------------------------------

export interface XmlElement { name: string; attrs: Record<string, string>; children: XmlElement[]; text: string; }

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (all, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[e] ?? all;
  });
}

/** Parses an XML document into a tree; tolerant of a prolog, doctype, comments and processing instructions. */
export function parseXml(xml: string): XmlElement | undefined {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf('<', i);
    const top = stack[stack.length - 1]!;
    if (lt < 0) { top.text += decodeEntities(xml.slice(i)); break; }
    if (lt > i) top.text += decodeEntities(xml.slice(i, lt));
    if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt);
      top.text += xml.slice(lt + 9, end < 0 ? n : end);
      i = end < 0 ? n : end + 3;
    } else if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt);
      i = end < 0 ? n : end + 3;
    } else if (xml.startsWith('<?', lt) || xml.startsWith('<!', lt)) {
      const end = xml.indexOf('>', lt);
      i = end < 0 ? n : end + 1;
    } else if (xml[lt + 1] === '/') {
      const end = xml.indexOf('>', lt);
      const name = xml.slice(lt + 2, end < 0 ? n : end).trim();
      // Pop to the matching element (tolerates unclosed children).
      for (let k = stack.length - 1; k > 0; k--) if (stack[k]!.name === name) { stack.length = k; break; }
      i = end < 0 ? n : end + 1;
    } else {
      // Find the tag end outside quoted attribute values.
      let j = lt + 1;
      let q: string | undefined;
      for (; j < n; j++) {
        const c = xml[j];
        if (q) { if (c === q) q = undefined; } else if (c === '"' || c === "'") q = c; else if (c === '>') break;
      }
      let body = xml.slice(lt + 1, j);
      const selfClosing = body.endsWith('/');
      if (selfClosing) body = body.slice(0, -1);
      const nm = /^[^\s/>]+/.exec(body)?.[0] ?? '';
      const attrs: Record<string, string> = {};
      const re = /([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
      let a: RegExpExecArray | null;
      const rest = body.slice(nm.length);
      while ((a = re.exec(rest))) attrs[a[1]!] = decodeEntities(a[2] ?? a[3] ?? '');
      const el: XmlElement = { name: nm, attrs, children: [], text: '' };
      top.children.push(el);
      if (!selfClosing) stack.push(el);
      i = j + 1;
    }
  }
  return root.children.find((c) => c.name) ?? undefined;
}

function* walk(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) yield* walk(c);
}

/** pytest's `tests/test_x.py:12: AssertionError` line (the last one is the assertion), preferring the case's own file. */
function pyLocation(text: string, file: string | undefined): { file?: string; line?: number } {
  const all = [...text.matchAll(/^([^\s:]+\.py):(\d+): /gm)];
  const m = all.filter((x) => !file || x[1] === file).pop() ?? all.pop();
  return m ? { file: m[1]!, line: Number(m[2]) } : {};
}

/** JUnit XML (surefire, pytest --junitxml, jest-junit, gradle): testsuites/testsuite/testcase with failure/error/skipped. */
export function parseJUnit(xml: string): TestResults | undefined {
  const root = parseXml(xml);
  if (!root || (root.name !== 'testsuites' && root.name !== 'testsuite')) return undefined;
  let passed = 0, failed = 0, skipped = 0;
  const failures: TestFailure[] = [];
  for (const el of walk(root)) {
    if (el.name !== 'testcase') continue;
    const bad = el.children.find((c) => c.name === 'failure' || c.name === 'error');
    if (bad) {
      failed++;
      const cls = el.attrs['classname'];
      const name = cls && el.attrs['name'] ? `${cls} ${el.attrs['name']}` : (el.attrs['name'] ?? cls ?? 'testcase');
      const detail = bad.text.trim();
      const message = bad.attrs['message']?.trim() || detail.split('\n')[0] || bad.name;
      // file/line attributes (pytest, jest-junit), else the first user frame of the failure's text (a stack or `path.py:12: AssertionError`).
      const attrLine = el.attrs['line'] ? Number(el.attrs['line']) : undefined;
      const fromText = stackLocation(`x\n${detail}`).file ? stackLocation(`x\n${detail}`) : pyLocation(detail, el.attrs['file']);
      const file = el.attrs['file'] ?? fromText.file;
      const line = attrLine && Number.isFinite(attrLine) ? attrLine : fromText.line;
      failures.push({ name, message, ...(file ? { file } : {}), ...(line ? { line } : {}), ...valuesFromMessage(`${bad.attrs['message'] ?? ''}\n${detail}`) });
    } else if (el.children.some((c) => c.name === 'skipped')) skipped++;
    else passed++;
  }
  return { passed, failed, skipped, failures, format: 'junit', complete: true };
}

// ---------------------------------------------------------------------------------------------
// JSON reporters
// ---------------------------------------------------------------------------------------------

/** Finds the first JSON object in mixed output (banners, console.log lines) for which `accept` holds. */
export function extractJson(text: string, accept: (v: Record<string, unknown>) => boolean): Record<string, unknown> | undefined {
  const end = text.lastIndexOf('}');
  if (end < 0) return undefined;
  let from = 0;
  for (let tries = 0; tries < 200; tries++) {
    const at = text.indexOf('{', from);
    if (at < 0 || at > end) return undefined;
    if (at === 0 || text[at - 1] === '\n') {
      try {
        const v = JSON.parse(text.slice(at, end + 1)) as unknown;
        if (v && typeof v === 'object' && accept(v as Record<string, unknown>)) return v as Record<string, unknown>;
      } catch { /* try the next candidate */ }
    }
    from = at + 1;
  }
  return undefined;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function stackLocation(stack: unknown): { file?: string; line?: number } {
  if (typeof stack !== 'string') return {};
  for (const l of stack.split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):\d+\)?\s*$/.exec(l.trim());
    if (m && !m[1]!.includes('node_modules') && !m[1]!.startsWith('node:')) return { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]) };
  }
  return {};
}

/** mocha `--reporter json`: { stats: {passes, failures, pending}, failures: [{fullTitle, err: {message, stack}}] }. */
export function parseMochaJson(text: string): TestResults | undefined {
  const j = extractJson(text, (v) => typeof v['stats'] === 'object' && v['stats'] !== null && 'passes' in (v['stats'] as object));
  if (!j) return undefined;
  const stats = j['stats'] as Record<string, unknown>;
  const failures: TestFailure[] = [];
  for (const f of Array.isArray(j['failures']) ? (j['failures'] as Array<Record<string, unknown>>) : []) {
    const err = (f['err'] ?? {}) as Record<string, unknown>;
    const loc = stackLocation(err['stack']);
    // mocha prints expected/actual when the assertion library set them (node:assert, chai with showDiff).
    const values = err['expected'] !== undefined || err['actual'] !== undefined
      ? { ...(err['expected'] !== undefined ? { expected: show(err['expected'])! } : {}), ...(err['actual'] !== undefined ? { actual: show(err['actual'])! } : {}) }
      : valuesFromMessage(String(err['message'] ?? ''));
    failures.push({ name: String(f['fullTitle'] ?? f['title'] ?? 'test'), message: String(err['message'] ?? 'failed'), ...(typeof f['file'] === 'string' ? { file: f['file'] } : {}), ...loc, ...values });
  }
  return { passed: num(stats['passes']), failed: num(stats['failures']), skipped: num(stats['pending']), failures, format: 'mocha-json', complete: true };
}

/** jest `--json` / vitest `--reporter=json`: numPassedTests, numFailedTests, numPendingTests, testResults[].assertionResults[]. */
export function parseJestJson(text: string): TestResults | undefined {
  const j = extractJson(text, (v) => typeof v['numTotalTests'] === 'number' || typeof v['numPassedTests'] === 'number');
  if (!j) return undefined;
  const failures: TestFailure[] = [];
  for (const suite of Array.isArray(j['testResults']) ? (j['testResults'] as Array<Record<string, unknown>>) : []) {
    const file = typeof suite['name'] === 'string' ? suite['name'] : typeof suite['testFilePath'] === 'string' ? suite['testFilePath'] : undefined;
    const asserts = Array.isArray(suite['assertionResults']) ? (suite['assertionResults'] as Array<Record<string, unknown>>) : [];
    for (const a of asserts) {
      if (a['status'] !== 'failed') continue;
      const msgs = Array.isArray(a['failureMessages']) ? (a['failureMessages'] as unknown[]).map(String) : [];
      const loc = a['location'] as { line?: number } | undefined;
      // The assertion's frame in the failure message (jest and vitest print the stack there), else the test's location.
      const full = (msgs[0] ?? '').replace(ANSI, '');
      const at = stackLocation(full);
      const matcher = (Array.isArray(a['failureDetails']) ? (a['failureDetails'] as Array<Record<string, unknown>>)[0]?.['matcherResult'] : undefined) as Record<string, unknown> | undefined;
      const values = matcher && ('expected' in matcher || 'actual' in matcher)
        ? { ...(matcher['expected'] !== undefined ? { expected: show(matcher['expected'])! } : {}), ...(matcher['actual'] !== undefined ? { actual: show(matcher['actual'])! } : {}) }
        : valuesFromMessage(full);
      failures.push({ name: String(a['fullName'] ?? a['title'] ?? 'test'), message: (full.split('\n').find((l) => l.trim()) ?? 'failed').trim(), ...(file ? { file } : {}),
        ...(at.file && file && at.file.endsWith(file.split('/').pop()!) ? at : loc?.line ? { line: loc.line } : {}), ...values });
    }
    if (!asserts.length && suite['status'] === 'failed' && typeof suite['message'] === 'string') failures.push({ name: file ?? 'test suite', message: suite['message'].split('\n').find((l) => l.trim()) ?? 'failed', ...(file ? { file } : {}) });
  }
  return { passed: num(j['numPassedTests']), failed: num(j['numFailedTests']) + num(j['numRuntimeErrorTestSuites']), skipped: num(j['numPendingTests']) + num(j['numTodoTests']), failures, format: 'jest-json', complete: true };
}

/** `go test -json ./...`: one event per line; per-test pass/fail/skip with the output collected for failures. */
export function parseGoJson(text: string): TestResults | undefined {
  let passed = 0, failed = 0, skipped = 0, events = 0;
  const out = new Map<string, string[]>();
  const failures: TestFailure[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: Record<string, unknown>;
    try { e = JSON.parse(line) as Record<string, unknown>; } catch { continue; }
    events++;
    const test = typeof e['Test'] === 'string' ? e['Test'] : undefined;
    if (!test) continue;
    const key = `${String(e['Package'] ?? '')} ${test}`;
    if (e['Action'] === 'output') { const o = out.get(key) ?? []; if (o.length < 50) o.push(String(e['Output'] ?? '')); out.set(key, o); }
    else if (e['Action'] === 'pass') passed++;
    else if (e['Action'] === 'skip') skipped++;
    else if (e['Action'] === 'fail') {
      failed++;
      const o = (out.get(key) ?? []).map((s) => s.trim()).filter((s) => s && !s.startsWith('=== ') && !s.startsWith('--- '));
      const loc = o.map((s) => /^([\w./-]+\.go):(\d+):\s*(.*)$/.exec(s)).find(Boolean);
      failures.push({ name: test, message: loc?.[3] ?? o[0] ?? 'failed', ...(loc ? { file: loc[1]!, line: Number(loc[2]) } : {}) });
    }
  }
  return events ? { passed, failed, skipped, failures, format: 'go-json', complete: true } : undefined;
}

/** Last resort: the summary line of a human reporter (mocha spec, jest, pytest, vitest). Counts only. */
export function parseTextSummary(text: string): TestResults | undefined {
  const t = text.replace(/\x1b\[[0-9;]*m/g, '');
  const grab = (re: RegExp) => { const m = re.exec(t); return m ? Number(m[1]) : undefined; };
  // mocha spec
  const mp = grab(/^\s*(\d+) passing\b/m);
  if (mp !== undefined) return { passed: mp, failed: grab(/^\s*(\d+) failing\b/m) ?? 0, skipped: grab(/^\s*(\d+) pending\b/m) ?? 0, failures: [], format: 'text-summary', complete: false };
  // jest / vitest: "Tests:       1 failed, 2 passed, 3 total" / "Tests  1 failed | 2 passed (3)"
  const jl = /^\s*Tests:?\s+(.*)$/m.exec(t);
  if (jl && /\d+\s+(passed|failed)/.test(jl[1]!)) {
    const g = (w: string) => Number(new RegExp(`(\\d+)\\s+${w}`).exec(jl[1]!)?.[1] ?? 0);
    return { passed: g('passed'), failed: g('failed'), skipped: g('skipped') + g('todo'), failures: [], format: 'text-summary', complete: false };
  }
  // pytest: "==== 1 failed, 2 passed, 1 skipped in 0.1s ===="
  const pl = /^=+ (.*\d+ (?:passed|failed|error).*) in [\d.]+s/m.exec(t);
  if (pl) {
    const g = (w: string) => Number(new RegExp(`(\\d+) ${w}`).exec(pl[1]!)?.[1] ?? 0);
    return { passed: g('passed'), failed: g('failed') + g('errors?'), skipped: g('skipped') + g('xfailed'), failures: [], format: 'text-summary', complete: false };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Coverage
// ---------------------------------------------------------------------------------------------

/** lcov tracefile: SF / LF / LH / FNF / FNH / DA records, end_of_record. LF/LH are derived from DA when absent. */
export function parseLcov(text: string): CoverageReport | undefined {
  const files: FileCoverage[] = [];
  let cur: { file: string; lf?: number; lh?: number; fnf?: number; fnh?: number; da: Map<number, number> } | undefined;
  const close = () => {
    if (!cur) return;
    const daFound = cur.da.size;
    const daHit = [...cur.da.values()].filter((h) => h > 0).length;
    const found = cur.lf ?? daFound;
    const hit = cur.lh ?? daHit;
    const uncovered = [...cur.da.entries()].filter(([, h]) => h === 0).map(([l]) => l).sort((a, b) => a - b);
    files.push({ file: cur.file, linesFound: found, linesHit: hit, pct: pct(hit, found), ...(cur.fnf !== undefined ? { functionsFound: cur.fnf } : {}), ...(cur.fnh !== undefined ? { functionsHit: cur.fnh } : {}), uncoveredLines: uncovered });
    cur = undefined;
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('SF:')) { close(); cur = { file: line.slice(3), da: new Map() }; continue; }
    if (!cur) continue;
    if (line === 'end_of_record') { close(); continue; }
    const [k, v = ''] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)];
    if (k === 'LF') cur.lf = Number(v);
    else if (k === 'LH') cur.lh = Number(v);
    else if (k === 'FNF') cur.fnf = Number(v);
    else if (k === 'FNH') cur.fnh = Number(v);
    else if (k === 'DA') { const [l, h] = v.split(','); const ln = Number(l); if (Number.isFinite(ln)) cur.da.set(ln, (cur.da.get(ln) ?? 0) + Number(h ?? 0)); }
  }
  close();
  if (!files.length) return undefined;
  const found = files.reduce((s, f) => s + f.linesFound, 0);
  const hit = files.reduce((s, f) => s + f.linesHit, 0);
  return { format: 'lcov', lines: pct(hit, found), files };
}

/** istanbul json-summary (coverage/coverage-summary.json): { total: {lines: {total, covered, pct}}, "<file>": {...} }. */
export function parseIstanbulSummary(text: string): CoverageReport | undefined {
  let j: Record<string, { lines?: { total?: number; covered?: number; pct?: number | string }; functions?: { total?: number; covered?: number } }>;
  try { j = JSON.parse(text) as typeof j; } catch { return undefined; }
  if (!j || typeof j !== 'object' || !j['total']?.lines) return undefined;
  const files: FileCoverage[] = [];
  for (const [file, v] of Object.entries(j)) {
    if (file === 'total' || !v?.lines) continue;
    const found = num(v.lines.total), hit = num(v.lines.covered);
    files.push({ file, linesFound: found, linesHit: hit, pct: typeof v.lines.pct === 'number' ? v.lines.pct : pct(hit, found), ...(v.functions ? { functionsFound: num(v.functions.total), functionsHit: num(v.functions.covered) } : {}) });
  }
  const t = j['total'].lines;
  return { format: 'istanbul-summary', lines: typeof t.pct === 'number' ? t.pct : pct(num(t.covered), num(t.total)), files };
}

/**
 * istanbul's coverage-final.json (nyc, c8 and jest `--coverage` write it; nyc's .nyc_output/*.json has the
 * same shape): per file, statementMap + s (hit counts). A line is found when a statement starts on it and
 * hit when one of those statements ran (lcov's DA lines, as istanbul's own lcov reporter derives them).
 */
export function parseIstanbulFinal(text: string): CoverageReport | undefined {
  let j: Record<string, { path?: string; statementMap?: Record<string, { start?: { line?: number } }>; s?: Record<string, number>; fnMap?: Record<string, unknown>; f?: Record<string, number> }>;
  try { j = JSON.parse(text) as typeof j; } catch { return undefined; }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return undefined;
  const files: FileCoverage[] = [];
  for (const [key, v] of Object.entries(j)) {
    if (!v || typeof v !== 'object' || !v.statementMap || !v.s) continue;
    const lines = new Map<number, number>();
    for (const [id, loc] of Object.entries(v.statementMap)) {
      const line = loc?.start?.line;
      if (typeof line !== 'number') continue;
      lines.set(line, Math.max(lines.get(line) ?? 0, num(v.s[id])));
    }
    const found = lines.size;
    const hit = [...lines.values()].filter((h) => h > 0).length;
    const fns = v.f ? Object.values(v.f) : undefined;
    files.push({
      file: v.path ?? key, linesFound: found, linesHit: hit, pct: pct(hit, found),
      ...(fns ? { functionsFound: fns.length, functionsHit: fns.filter((h) => num(h) > 0).length } : {}),
      uncoveredLines: [...lines.entries()].filter(([, h]) => h === 0).map(([l]) => l).sort((a, b) => a - b),
    });
  }
  if (!files.length) return undefined;
  const found = files.reduce((a, f) => a + f.linesFound, 0);
  const hit = files.reduce((a, f) => a + f.linesHit, 0);
  return { format: 'istanbul-final', lines: pct(hit, found), files };
}

/** node --test --experimental-test-coverage: the "# start of coverage report" table in TAP / spec output. */
export function parseNodeCoverage(text: string): CoverageReport | undefined {
  const start = text.indexOf('start of coverage report');
  if (start < 0) return undefined;
  const files: FileCoverage[] = [];
  let total: number | undefined;
  for (const raw of text.slice(start).split('\n')) {
    if (raw.includes('end of coverage report')) break;
    const cells = raw.replace(/^[#ℹ\s]+/, '').split('|').map((c) => c.trim());
    if (cells.length < 4 || !/^\d+(\.\d+)?$/.test(cells[1]!)) continue;
    const p = Number(cells[1]);
    if (cells[0] === 'all files') { total = p; continue; }
    const uncovered: number[] = [];
    for (const part of (cells[4] ?? '').split(/\s+/)) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (m) for (let l = Number(m[1]); l <= Number(m[2] ?? m[1]) && uncovered.length < 10000; l++) uncovered.push(l);
    }
    files.push({ file: cells[0]!, linesFound: 0, linesHit: 0, pct: p, uncoveredLines: uncovered });
  }
  if (!files.length && total === undefined) return undefined;
  return { format: 'node-tap', lines: total ?? round2(files.reduce((s, f) => s + f.pct, 0) / files.length), files };
}

/**
 * The hunt: one pass over each log file, every line tokenized once for indicators and checked by
 * the built-in detections; per-line signals are aggregated into detections with ATT&CK mapping.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fingerprint, normalizeLine, sortFindings, toWorkspacePath, type Finding, type Severity, severityRank } from '../findings/finding';
import { detectLine, parseLogLine, techniqueFor, type DetectionKind, type LogFormat, type Technique } from './attack';
import { IocMatcher, type Indicator } from './ioc';
import { WorkspaceFiles } from '../workspace/files';

export interface Detection extends Finding {
  kind: DetectionKind;
  technique: Technique;
  /** Lines (1-based) that support it, capped at 50. */
  lines: number[];
  count: number;
  ip?: string;
  user?: string;
}

export interface HuntOptions {
  /** Failed logins from one IP in one file that make a brute force (default 5). */
  bruteForceThreshold?: number;
  sudoUsers?: readonly string[];
  /** Cooperative cancellation. */
  signal?: AbortSignal;
  /** Largest file read, bytes (default 64 MiB). */
  maxFileBytes?: number;
}

export interface FileStats {
  file: string;
  lines: number;
  parsed: number;
  formats: Partial<Record<LogFormat, number>>;
}

export interface HuntResult {
  findings: Finding[];
  detections: Detection[];
  files: FileStats[];
  skipped: Array<{ file: string; reason: string }>;
  counts: { files: number; lines: number; parsedLines: number; indicators: number; iocHits: number; detections: number; bySeverity: Record<Severity, number>; byTechnique: Record<string, number> };
}

const LOG_EXT = /\.(?:log|jsonl|ndjson)(?:\.\d+)?$/i;
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.venv', 'vendor']);

/** The workspace's log files (`*.log`, `*.log.N`, `*.jsonl`), skipping dependency and build folders. */
export function findLogFiles(root: string, maxFiles = 200, maxDepth = 6): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > maxDepth || out.length >= maxFiles) return;
    let entries;
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (out.length >= maxFiles) return;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) { if (!SKIP_DIRS.has(e.name)) walk(p, depth + 1); }
      else if (e.isFile() && LOG_EXT.test(e.name)) out.push(p);
    }
  };
  walk(root, 0);
  return out;
}

/** input.logs (a path or paths, relative to the workspace), else the workspace's log files. */
export function resolveLogFiles(raw: unknown, workspace?: string): string[] {
  const given = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : [];
  if (given.length) {
    const out: string[] = [];
    // Inside the workspace only: with none, a given path would resolve against the server's folder.
    const confined = workspace ? new WorkspaceFiles(workspace) : undefined;
    for (const g of given) {
      const r = confined?.resolve(g);
      if (!r || (!r.ok && r.reason !== 'not found')) continue;
      const p = r.ok ? r.real : path.resolve(workspace!, g);
      if (existsSync(p) && statSync(p).isDirectory()) out.push(...findLogFiles(p));
      else out.push(p);
    }
    return out;
  }
  return workspace ? findLogFiles(workspace) : [];
}

function displayPath(file: string, workspace?: string): string {
  if (workspace) {
    const rel = path.relative(workspace, file);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) return toWorkspacePath(rel);
  }
  return toWorkspacePath(file);
}

function describe(ind: Indicator): string {
  const bits = [ind.source && `source: ${ind.source}`, ind.description].filter(Boolean);
  return bits.length ? ` (${bits.join('; ')})` : '';
}

const MAX_SEV = (a: Severity, b: Severity): Severity => (severityRank(a) >= severityRank(b) ? a : b);

export function hunt(files: readonly string[], indicators: readonly Indicator[], opts: HuntOptions = {}, workspace?: string): HuntResult {
  const matcher = new IocMatcher(indicators);
  const threshold = opts.bruteForceThreshold ?? 5;
  const maxBytes = opts.maxFileBytes ?? 64 * 1024 * 1024;
  const findings: Finding[] = [];
  const detections: Detection[] = [];
  const stats: FileStats[] = [];
  const skipped: HuntResult['skipped'] = [];
  const confined = workspace ? new WorkspaceFiles(workspace) : undefined;

  for (const abs of files) {
    if (opts.signal?.aborted) { skipped.push({ file: displayPath(abs, workspace), reason: 'aborted' }); continue; }
    const file = displayPath(abs, workspace);
    const where = confined?.resolve(abs);
    if (where && !where.ok && where.reason !== 'not found') { skipped.push({ file, reason: where.reason }); continue; }
    let text: string;
    try {
      const st = statSync(abs);
      if (st.size > maxBytes) { skipped.push({ file, reason: `larger than ${maxBytes} bytes` }); continue; }
      text = readFileSync(abs, 'utf8');
    } catch (e) { skipped.push({ file, reason: (e as NodeJS.ErrnoException).code ?? (e as Error).message }); continue; }
    const fstat: FileStats = { file, lines: 0, parsed: 0, formats: {} };
    // Aggregation per (kind, key) within the file.
    type Agg = { kind: DetectionKind; key: string; lines: number[]; texts: string[]; count: number; severity: Severity; detail: string; ip?: string; users: Set<string>; success?: number; firstCol: number };
    const aggs = new Map<string, Agg>();
    const lines = text.split(/\r?\n/);
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    lines.forEach((line, i) => {
      const ln = i + 1;
      fstat.lines++;
      const p = parseLogLine(line);
      fstat.formats[p.format] = (fstat.formats[p.format] ?? 0) + 1;
      if (p.format !== 'unknown') fstat.parsed++;
      for (const h of matcher.match(line)) {
        const ind = h.indicator;
        const ruleId = `ioc/${ind.type}`;
        findings.push({
          ruleId, severity: ind.severity, file,
          message: `indicator ${ind.value} (${ind.type}) matched \`${h.matched}\`${describe(ind)}`,
          range: { startLine: ln, startColumn: h.index + 1, endLine: ln, endColumn: h.index + h.matched.length + 1 },
          snippet: line.length > 300 ? line.slice(0, 300) + '…' : line,
          fingerprint: fingerprint(ruleId, file, ind.key, normalizeLine(line)),
        });
        if (ind.type !== 'hash') {
          const key = `ioc-contact|${ind.key}`;
          const a = aggs.get(key) ?? { kind: 'ioc-contact' as const, key: ind.value, lines: [], texts: [], count: 0, severity: ind.severity, detail: `traffic involving indicator ${ind.value}${describe(ind)}`, users: new Set<string>(), firstCol: h.index + 1 };
          a.count++; if (a.lines.length < 50) { a.lines.push(ln); a.texts.push(line); }
          aggs.set(key, a);
        }
      }
      for (const s of detectLine(p, opts.sudoUsers ? { sudoUsers: opts.sudoUsers } : {})) {
        const key = `${s.kind}|${s.key}`;
        const a = aggs.get(key) ?? { kind: s.kind, key: s.key, lines: [], texts: [], count: 0, severity: s.severity, detail: s.detail, users: new Set<string>(), firstCol: 1, ...(s.ip ? { ip: s.ip } : {}) };
        if (s.success) { if (a.success === undefined) a.success = ln; if (a.lines.length < 50) { a.lines.push(ln); a.texts.push(line); } aggs.set(key, a); continue; }
        a.count++;
        a.severity = MAX_SEV(a.severity, s.severity);
        if (s.user) a.users.add(s.user);
        if (a.lines.length < 50) { a.lines.push(ln); a.texts.push(line); }
        aggs.set(key, a);
      }
    });
    stats.push(fstat);
    for (const a of aggs.values()) {
      let severity = a.severity;
      let message: string;
      if (a.kind === 'ssh-brute-force') {
        if (a.count < threshold) continue;
        const compromised = a.success !== undefined && a.success > (a.lines[0] ?? 0);
        severity = compromised ? 'critical' : 'high';
        message = `${a.count} failed logins from ${a.key} for ${[...a.users].slice(0, 5).join(', ')}${compromised ? `, then a successful login at line ${a.success}` : ''}`;
      } else if (a.count === 0) continue; // an accepted login alone is not a detection
      else message = a.count > 1 ? `${a.detail} (${a.count} lines)` : a.detail;
      const t = techniqueFor(a.kind);
      const start = a.lines[0]!, end = a.lines[a.lines.length - 1]!;
      const ruleId = `attack/${a.kind}`;
      const d: Detection = {
        ruleId, severity, file, kind: a.kind, technique: t, lines: a.lines, count: a.count,
        message: `${t.id} ${t.name} (${t.tactic}): ${message}`,
        range: { startLine: start, startColumn: 1, endLine: end, endColumn: (a.texts[a.texts.length - 1]?.length ?? 0) + 1 },
        snippet: (a.texts[0] ?? '').slice(0, 300),
        fingerprint: fingerprint(ruleId, file, a.key),
      };
      if (a.ip) d.ip = a.ip;
      if (a.users.size) d.user = [...a.users][0]!;
      detections.push(d);
    }
  }
  sortFindings(findings);
  detections.sort((a, b) => severityRank(b.severity) - severityRank(a.severity) || a.file.localeCompare(b.file) || a.range.startLine - b.range.startLine);
  const bySeverity: Record<Severity, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  for (const f of [...findings, ...detections]) bySeverity[f.severity]++;
  const byTechnique: Record<string, number> = {};
  for (const d of detections) byTechnique[d.technique.id] = (byTechnique[d.technique.id] ?? 0) + 1;
  return {
    findings, detections, files: stats, skipped,
    counts: {
      files: stats.length, lines: stats.reduce((s, f) => s + f.lines, 0), parsedLines: stats.reduce((s, f) => s + f.parsed, 0),
      indicators: matcher.count, iocHits: findings.length, detections: detections.length, bySeverity, byTechnique,
    },
  };
}

/**
 * The debug analysis: parse the trace, map its frames to workspace files, classify the error,
 * propose a fix (with a guard for null dereferences) and, for root-cause, correlate with log lines.
 * Pure apart from reading the workspace (file existence and the origin line).
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { classify, type CauseEntry } from './causes';
import { parseTrace, type ErrorHeader, type Frame, type TraceLanguage } from './trace-parser';
import { isProtected, WorkspaceFiles } from '../workspace/files';
import { originalPosition } from './source-maps';

export interface MappedFrame {
  fn?: string;
  /** The file as it appears in the trace. */
  traceFile: string;
  /** Workspace-relative path (forward slashes). */
  path: string;
  line: number;
  column?: number;
  /** The source line, when the file has that line. */
  code?: string;
  /** Index of the frame in the parsed trace (0 = innermost). */
  index: number;
  /** The frame was in compiled code and mapped through a source map: where it was in the compiled file, and the map. */
  generated?: { path: string; line: number; column?: number; map: string };
}

export interface FixSuggestion {
  text: string;
  /** For a null dereference: the workspace line and a guard to add before it. */
  location?: { path: string; line: number; code: string };
  guard?: string;
  /** The expression that was null/undefined, when identified. */
  expression?: string;
}

export interface LogCorrelation {
  line: number;
  text: string;
  reasons: string[];
  score: number;
}

export interface DebugReport {
  language: TraceLanguage;
  error?: ErrorHeader;
  causes: ErrorHeader[];
  frameCount: number;
  workspaceFrames: MappedFrame[];
  origin?: MappedFrame;
  classification?: { id: string; title: string; category: string; explanation: string; matchedError: string };
  fix?: FixSuggestion;
  correlations?: LogCorrelation[];
  firstSignal?: LogCorrelation;
  confidence: number;
  evidence: string[];
}

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'target', '__pycache__', '.venv', 'venv', 'vendor', '.next', 'coverage']);
const LIBRARY_PATH = /(^|[\\/])(node_modules|site-packages|dist-packages|vendor)[\\/]|^node:|^internal[\\/]|<frozen |\/usr\/(local\/)?(go|lib)\//;

/** Workspace files (relative, forward slashes), bounded; library folders skipped. */
export function listWorkspaceFiles(workspace: string, limit = 20000): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    if (out.length >= limit) return;
    let entries: import('node:fs').Dirent[];
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (out.length >= limit) return;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) { if (!SKIP_DIRS.has(e.name)) walk(path.join(dir, e.name), r); } else if (e.isFile()) out.push(r);
    }
  };
  walk(workspace, '');
  return out;
}

function segments(p: string): string[] {
  return p.replace(/\\/g, '/').split('/').filter((s) => s && s !== '.');
}

function trailingMatch(a: string[], b: string[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

/**
 * Maps one frame to a workspace file: an absolute path inside the workspace, a path relative to it,
 * or (trace from another machine, Java's bare file names) the workspace file sharing the longest path
 * suffix. Library frames (node_modules, site-packages, runtime) never map.
 */
export function mapFrame(frame: Frame, workspace: string, files: string[]): string | undefined {
  if (LIBRARY_PATH.test(frame.file)) return undefined;
  let root: string;
  try { root = realpathSync(workspace); } catch { return undefined; }
  const candidate = path.isAbsolute(frame.file) ? frame.file : path.join(root, frame.file);
  try {
    const real = realpathSync(candidate);
    const rel = path.relative(root, real);
    // Inside the workspace only, and never Cadre's data or key material even there.
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel) && !isProtected(real) && statSync(real).isFile()) return rel.split(path.sep).join('/');
  } catch { /* not at that path: try by suffix */ }
  let want = segments(frame.file);
  if (frame.language === 'java' && frame.className) {
    const pkg = frame.className.split('.').slice(0, -1).filter((s) => /^[a-z_]/.test(s));
    want = [...pkg, frame.file];
  }
  const base = want[want.length - 1];
  let best: string | undefined;
  let bestScore = 0;
  let tie = false;
  for (const f of files) {
    const segs = segments(f);
    if (segs[segs.length - 1] !== base) continue;
    const score = trailingMatch(segs, want);
    if (score > bestScore) { best = f; bestScore = score; tie = false; } else if (score === bestScore) tie = true;
  }
  // A bare file name matching several files is ambiguous: not mapped.
  if (!best || (tie && bestScore <= 1)) return undefined;
  return best;
}

/** The source line, read through the workspace's confinement (a symlink out or a protected file gives nothing). */
function readLine(files: WorkspaceFiles, rel: string, line: number): string | undefined {
  const r = files.readText(rel, 8 * 1024 * 1024);
  if (!r.ok) return undefined;
  const lines = r.text.split(/\r?\n/);
  return line >= 1 && line <= lines.length ? lines[line - 1] : undefined;
}

export function mapFrames(frames: Frame[], workspace: string | undefined): MappedFrame[] {
  if (!workspace || !existsSync(workspace)) return [];
  const files = listWorkspaceFiles(workspace);
  const confined = new WorkspaceFiles(workspace);
  let root = workspace;
  try { root = realpathSync(workspace); } catch { /* keep as given */ }
  const out: MappedFrame[] = [];
  frames.forEach((f, index) => {
    const rel = mapFrame(f, workspace, files);
    if (!rel || !confined.resolve(rel).ok) return;
    // Compiled JavaScript with a source map: report the line of the source the developer wrote.
    const orig = f.language === 'node' ? originalPosition(confined, root, rel, f.line, f.column) : undefined;
    const at = orig ? { path: orig.path, line: orig.line, column: orig.column } : { path: rel, line: f.line, column: f.column };
    const code = readLine(confined, at.path, at.line);
    out.push({
      ...(f.fn ? { fn: f.fn } : {}), traceFile: f.file, path: at.path, line: at.line, ...(at.column ? { column: at.column } : {}),
      ...(code !== undefined ? { code } : {}), index,
      ...(orig ? { generated: { path: rel, line: f.line, ...(f.column ? { column: f.column } : {}), map: orig.map } } : {}),
    });
  });
  return out;
}

const IDENT = String.raw`[A-Za-z_$][\w$]*(?:(?:\?\.|\.)[A-Za-z_$][\w$]*|\[[^\]]+\]|\(\))*`;

/** Finds, in a source line, the expression whose property `prop` was read (e.g. `user.profile` in `user.profile.name`). */
export function nullExpression(code: string, prop?: string, language?: TraceLanguage): string | undefined {
  const src = code.replace(/\/\/.*$|#.*$/, '');
  if (prop) {
    const re = new RegExp(`(${IDENT})\\s*(?:\\.|\\?\\.|\\[['"])${prop.replace(/[$]/g, '\\$')}\\b`);
    const m = re.exec(src);
    if (m) return m[1];
  }
  if (language === 'go' || language === 'java' || language === 'python' || !prop) {
    // The first dotted access on the line.
    const m = new RegExp(`(?:^|[^\\w$.])((?!return\\b|if\\b|await\\b|new\\b)[A-Za-z_$][\\w$]*)\\s*\\.\\s*[A-Za-z_$]`).exec(src);
    if (m) return m[1];
  }
  return undefined;
}

function guardFor(language: TraceLanguage, expr: string, indent: string): string {
  switch (language) {
    case 'python': return `${indent}if ${expr} is None:\n${indent}    raise ValueError("${expr} is None")  # or return a default`;
    case 'java': return `${indent}if (${expr} == null) {\n${indent}    throw new IllegalStateException("${expr} is null"); // or return a default\n${indent}}`;
    case 'go': return `${indent}if ${expr} == nil {\n${indent}\treturn fmt.Errorf("${expr} is nil")\n${indent}}`;
    default: return `${indent}if (${expr} == null) {\n${indent}  throw new Error('${expr} is ${'undefined or null'}'); // or return a default\n${indent}}`;
  }
}

export function suggestFix(cause: CauseEntry | undefined, error: ErrorHeader | undefined, origin: MappedFrame | undefined, language: TraceLanguage): FixSuggestion | undefined {
  if (!cause) return undefined;
  const fix: FixSuggestion = { text: cause.fix };
  if (cause.category === 'null-dereference' && origin?.code !== undefined) {
    const msg = error?.message ?? '';
    const prop = /\(reading '([^']+)'\)|\(setting '([^']+)'\)|has no attribute '([^']+)'/.exec(msg);
    const helpful = /because "([^"]+)" is null/.exec(msg);
    let expr = helpful?.[1] && !helpful[1].startsWith('<') ? helpful[1].replace(/^this\./, 'this.') : undefined;
    expr ??= nullExpression(origin.code, prop?.[1] ?? prop?.[2] ?? prop?.[3], language);
    const indent = /^\s*/.exec(origin.code)?.[0] ?? '';
    fix.location = { path: origin.path, line: origin.line, code: origin.code.trim() };
    if (expr) {
      fix.expression = expr;
      fix.guard = guardFor(language, expr, indent);
      fix.text = `${cause.fix} At ${origin.path}:${origin.line}, \`${expr}\` is ${language === 'python' ? 'None' : language === 'go' ? 'nil' : language === 'java' ? 'null' : 'null/undefined'}; add a guard before the line:\n${fix.guard}`;
      if (language === 'node' && prop) fix.text += `\nor use optional chaining: \`${expr}?.${prop[1] ?? prop[2]}\`.`;
    }
  } else if (origin) {
    fix.text = `${cause.fix} Start at ${origin.path}:${origin.line}.`;
  }
  return fix;
}

const STOP = new Set(['error', 'the', 'and', 'for', 'with', 'from', 'not', 'cannot', 'object', 'undefined', 'null', 'reading', 'line', 'file', 'at', 'in', 'of', 'to', 'is']);

/** Scores log lines against the error: same type/code, message words, frame files/functions, error level. */
export function correlateLogs(logs: string[], report: Pick<DebugReport, 'error' | 'causes' | 'workspaceFrames'>): LogCorrelation[] {
  const errors = [report.error, ...report.causes].filter((e): e is ErrorHeader => !!e);
  const GENERIC = new Set(['error', 'exception', 'panic', 'fatal error', 'throwable']);
  const types = new Set(errors.map((e) => e.type.split('.').pop()!.toLowerCase()).filter((t) => !GENERIC.has(t)));
  const codes = new Set(errors.map((e) => e.code).filter((c): c is string => !!c));
  const words = new Set(errors.flatMap((e) => e.message.toLowerCase().split(/[^a-z0-9_]+/)).filter((w) => w.length > 3 && !STOP.has(w)));
  const files = new Set(report.workspaceFrames.map((f) => path.basename(f.path).toLowerCase()));
  const fns = new Set(report.workspaceFrames.map((f) => f.fn?.split('.').pop()?.toLowerCase()).filter((f): f is string => !!f && f.length > 2));
  const out: LogCorrelation[] = [];
  logs.forEach((text, i) => {
    const low = text.toLowerCase();
    const reasons: string[] = [];
    let score = 0;
    for (const t of types) if (low.includes(t)) { reasons.push(`error type ${t}`); score += 3; break; }
    for (const c of codes) if (text.includes(c)) { reasons.push(`code ${c}`); score += 3; }
    const shared = [...words].filter((w) => low.includes(w));
    if (shared.length) { reasons.push(`message words: ${shared.slice(0, 4).join(', ')}`); score += Math.min(3, shared.length); }
    for (const f of files) if (low.includes(f)) { reasons.push(`frame file ${f}`); score += 2; }
    for (const f of fns) if (new RegExp(`\\b${f.replace(/[^\w]/g, '')}\\b`).test(low)) { reasons.push(`function ${f}`); score += 1; }
    if (score > 0 && /\b(error|fatal|crit(ical)?|panic|severe)\b/i.test(text)) { reasons.push('error level'); score += 1; }
    else if (score > 0 && /\bwarn(ing)?\b/i.test(text)) { reasons.push('warning level'); score += 0.5; }
    if (score >= 2) out.push({ line: i + 1, text: text.trim(), reasons, score });
  });
  return out;
}

/** Log-level error lines that are not a stack frame: a trace may be buried in them. */
export function linesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).flatMap((s) => s.split(/\r?\n/));
  if (typeof value === 'string') return value.split(/\r?\n/);
  return [];
}

/**
 * The whole analysis. Confidence comes from the evidence: an error header recognised (0.15), frames
 * parsed (0.1), frames in the workspace (0.25 for the origin, up to 0.05 more), a matched cause
 * (0.25), an origin line read and a concrete guard (0.1), correlated log lines (up to 0.1).
 */
export function analyzeTrace(text: string, workspace?: string, logs?: string[]): DebugReport {
  const parsed = parseTrace(text);
  const evidence: string[] = [];
  const workspaceFrames = mapFrames(parsed.frames, workspace);
  const origin = workspaceFrames[0];
  const cls = classify([parsed.error, ...parsed.causes].filter((e): e is ErrorHeader => !!e), parsed.language);
  const fix = suggestFix(cls?.cause, cls?.matched ?? parsed.error, origin, parsed.language);
  let confidence = 0;
  if (parsed.error) { confidence += 0.15; evidence.push(`error recognised: ${parsed.error.type}`); }
  if (parsed.frames.length) { confidence += 0.1; evidence.push(`${parsed.frames.length} ${parsed.language} frame(s) parsed`); }
  if (origin) {
    confidence += 0.25 + Math.min(0.05, 0.01 * (workspaceFrames.length - 1));
    evidence.push(`${workspaceFrames.length} frame(s) in the workspace, origin ${origin.path}:${origin.line}`);
    const viaMaps = workspaceFrames.filter((f) => f.generated).length;
    if (viaMaps) evidence.push(`${viaMaps} frame(s) mapped from compiled JavaScript through source maps`);
  }
  if (cls) { confidence += 0.25; evidence.push(`matched cause ${cls.cause.id}`); }
  if (origin?.code !== undefined) { confidence += 0.05; evidence.push('origin line read'); }
  if (fix?.guard) { confidence += 0.05; evidence.push(`null expression identified: ${fix.expression}`); }
  const report: DebugReport = {
    language: parsed.language,
    ...(parsed.error ? { error: parsed.error } : {}),
    causes: parsed.causes,
    frameCount: parsed.frames.length,
    workspaceFrames,
    ...(origin ? { origin } : {}),
    ...(cls ? { classification: { id: cls.cause.id, title: cls.cause.title, category: cls.cause.category, explanation: cls.cause.explanation, matchedError: `${cls.matched.type}: ${cls.matched.message}` } } : {}),
    ...(fix ? { fix } : {}),
    confidence: 0,
    evidence,
  };
  if (logs) {
    const correlations = correlateLogs(logs, report).sort((a, b) => b.score - a.score || a.line - b.line);
    report.correlations = correlations;
    if (correlations.length) {
      report.firstSignal = [...correlations].sort((a, b) => a.line - b.line)[0]!;
      confidence += Math.min(0.1, 0.03 * correlations.length);
      evidence.push(`${correlations.length} correlated log line(s), first at line ${report.firstSignal.line}`);
    }
  }
  report.confidence = Math.round(Math.min(0.95, confidence) * 100) / 100;
  return report;
}

export function renderDebugReport(r: DebugReport, rootCause = false): string {
  const out: string[] = [`# ${rootCause ? 'Root-cause analysis' : 'Error explanation'}`, ''];
  out.push(`Error: ${r.error ? `${r.error.type}: ${r.error.message}` : 'no error line recognised'} (${r.language})`);
  for (const c of r.causes) out.push(`Caused by: ${c.type}: ${c.message}`);
  out.push('', `## Likely origin`);
  if (r.origin) out.push(`${r.origin.path}:${r.origin.line}${r.origin.fn ? ` in ${r.origin.fn}` : ''}${r.origin.generated ? ` (compiled ${r.origin.generated.path}:${r.origin.generated.line}, source map ${r.origin.generated.map})` : ''}${r.origin.code !== undefined ? `\n    ${r.origin.code.trim()}` : ''}`);
  else out.push(`No frame of the trace is in the workspace (${r.frameCount} frame(s) parsed).`);
  if (r.workspaceFrames.length > 1) {
    out.push('', 'Workspace frames (innermost first):');
    for (const f of r.workspaceFrames) out.push(`- ${f.path}:${f.line}${f.fn ? ` (${f.fn})` : ''}${f.generated ? ` [from ${f.generated.path}:${f.generated.line}]` : ''}`);
  }
  out.push('', '## Cause');
  out.push(r.classification ? `${r.classification.title} [${r.classification.category}]: ${r.classification.explanation}` : 'Not in the built-in table of common causes.');
  if (r.fix) out.push('', '## Suggested fix', r.fix.text);
  if (r.correlations) {
    out.push('', '## Correlated log lines');
    if (!r.correlations.length) out.push('None of the log lines given relate to the error.');
    for (const c of r.correlations.slice(0, 10)) out.push(`- line ${c.line} (${c.reasons.join('; ')}): ${c.text}`);
    if (r.firstSignal) out.push('', `First related signal: line ${r.firstSignal.line}: ${r.firstSignal.text}`);
  }
  out.push('', `Confidence ${r.confidence} from: ${r.evidence.join('; ') || 'no evidence'}.`);
  return out.join('\n');
}

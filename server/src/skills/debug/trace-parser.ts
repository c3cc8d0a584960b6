/**
 * Parses stack traces and error logs of Node (V8), Python, Java and Go into one shape: the error
 * (type and message, with Java/Python chained causes) and its frames, innermost first.
 */

export type TraceLanguage = 'node' | 'python' | 'java' | 'go' | 'unknown';

export interface Frame {
  language: Exclude<TraceLanguage, 'unknown'>;
  fn?: string;
  /** The file as written in the trace (a path, a URL or, for Java, the bare file name). */
  file: string;
  line: number;
  column?: number;
  /** Java only: the declaring class, for package-path lookup. */
  className?: string;
  raw: string;
}

export interface ErrorHeader {
  type: string;
  message: string;
  /** Node system error code (ECONNREFUSED...) when present. */
  code?: string;
}

export interface ParsedTrace {
  language: TraceLanguage;
  /** The outermost error (the first reported). */
  error?: ErrorHeader;
  /** Chained causes (Java `Caused by:`, Python "During handling..."), outermost first. */
  causes: ErrorHeader[];
  /** Frames, innermost (where it was thrown) first. */
  frames: Frame[];
}

const NODE_FRAME = /^\s*at (?:(?:async )?(.+?) \()?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*\{?\s*$/;
const NODE_ERROR = /^\s*(?:Uncaught\s+)?((?:[A-Z]\w*)?(?:Error|Exception)|Error)(?: \[(\w+)\])?: (.*)$/;
const NODE_CODE = /\b(ECONNREFUSED|ECONNRESET|ENOENT|EADDRINUSE|EACCES|EPERM|ETIMEDOUT|ESOCKETTIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|EMFILE|EEXIST|EISDIR|ENOTDIR|ERR_[A-Z_]+)\b/;
const PY_FRAME = /^\s*File "(.+?)", line (\d+)(?:, in (.+))?\s*$/;
const PY_ERROR = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration)|KeyError|[A-Za-z_][\w.]*Error)(?:: ?(.*))?$/;
const JAVA_FRAME = /^\s*at ((?:[\w$]+\.)*[\w$<>]+)\.([\w$<>]+)\(([^():]+)(?::(\d+))?\)\s*$/;
const JAVA_ERROR = /^(?:Exception in thread "[^"]*"\s+)?((?:[a-z_][\w$]*\.)+[\w$]*(?:Exception|Error|Throwable))(?::\s?(.*))?$/;
const JAVA_CAUSE = /^\s*Caused by: ((?:[\w$]+\.)*[\w$]*(?:Exception|Error|Throwable))(?::\s?(.*))?$/;
const GO_GOROUTINE = /^goroutine \d+ \[[^\]]+\]:\s*$/;
const GO_PANIC = /^(panic|fatal error): (.*)$/;
const GO_LOCATION = /^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?\s*$/;

function detect(lines: string[]): TraceLanguage {
  const score: Record<Exclude<TraceLanguage, 'unknown'>, number> = { node: 0, python: 0, java: 0, go: 0 };
  for (const l of lines) {
    if (PY_FRAME.test(l) || /^Traceback \(most recent call last\):/.test(l)) score.python += 2;
    if (JAVA_FRAME.test(l)) score.java += 2;
    else if (NODE_FRAME.test(l)) score.node += 2;
    if (JAVA_CAUSE.test(l)) score.java += 1;
    if (GO_GOROUTINE.test(l) || GO_LOCATION.test(l)) score.go += 2;
    if (GO_PANIC.test(l)) score.go += 1;
    if (NODE_ERROR.test(l) && !JAVA_ERROR.test(l)) score.node += 0.5;
  }
  const best = (Object.entries(score) as Array<[Exclude<TraceLanguage, 'unknown'>, number]>).sort((a, b) => b[1] - a[1])[0]!;
  return best[1] > 0 ? best[0] : 'unknown';
}

function header(type: string, message: string | undefined): ErrorHeader {
  const msg = (message ?? '').trim();
  const code = NODE_CODE.exec(msg)?.[1];
  return code ? { type, message: msg, code } : { type, message: msg };
}

function parseNode(lines: string[]): ParsedTrace {
  const frames: Frame[] = [];
  let error: ErrorHeader | undefined;
  const causes: ErrorHeader[] = [];
  for (const l of lines) {
    const f = NODE_FRAME.exec(l);
    if (f) {
      frames.push({ language: 'node', ...(f[1] ? { fn: f[1] } : {}), file: f[2]!.replace(/^file:\/\//, ''), line: Number(f[3]), column: Number(f[4]), raw: l.trim() });
      continue;
    }
    const e = NODE_ERROR.exec(l) ?? /^\s*\[cause\]: ((?:[A-Z]\w*)?Error)(?: \[(\w+)\])?: (.*)$/.exec(l);
    if (e) {
      const h = header(e[1]!, e[3]);
      if (e[2] && !h.code) h.code = e[2];
      if (!error) error = h;
      else causes.push(h);
    }
  }
  // Node internals are not useful frames to map but stay in the list (they are not in a workspace).
  return { language: 'node', ...(error ? { error } : {}), causes, frames };
}

function parsePython(lines: string[]): ParsedTrace {
  // Each "Traceback" block lists frames outermost first and ends with its exception line; with chained
  // exceptions the last block is the one that escaped, the first the original cause.
  const blocks: Array<{ frames: Frame[]; error?: ErrorHeader }> = [];
  let cur: { frames: Frame[]; error?: ErrorHeader } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^Traceback \(most recent call last\):/.test(l)) {
      cur = { frames: [] };
      blocks.push(cur);
      continue;
    }
    const f = PY_FRAME.exec(l);
    if (f) {
      if (!cur) { cur = { frames: [] }; blocks.push(cur); }
      cur.frames.push({ language: 'python', file: f[1]!, line: Number(f[2]), ...(f[3] ? { fn: f[3].trim() } : {}), raw: l.trim() });
      continue;
    }
    const e = PY_ERROR.exec(l);
    if (e && cur && !cur.error && !/^\s/.test(l)) cur.error = header(e[1]!, e[2]);
  }
  const withError = blocks.filter((b) => b.error);
  const last = withError[withError.length - 1] ?? blocks[blocks.length - 1];
  const frames = last ? [...last.frames].reverse() : [];
  const causes = withError.slice(0, -1).reverse().map((b) => b.error!);
  return { language: 'python', ...(last?.error ? { error: last.error } : {}), causes, frames };
}

function parseJava(lines: string[]): ParsedTrace {
  const frames: Frame[] = [];
  let error: ErrorHeader | undefined;
  const causes: ErrorHeader[] = [];
  // Frames of the deepest "Caused by" are where it started; keep frames per section.
  const sections: Frame[][] = [[]];
  for (const l of lines) {
    const c = JAVA_CAUSE.exec(l);
    if (c) {
      causes.push(header(c[1]!, c[2]));
      sections.push([]);
      continue;
    }
    const f = JAVA_FRAME.exec(l);
    if (f) {
      const frame: Frame = { language: 'java', className: f[1]!, fn: `${f[1]}.${f[2]}`, file: f[3]!, line: f[4] ? Number(f[4]) : 0, raw: l.trim() };
      sections[sections.length - 1]!.push(frame);
      continue;
    }
    const e = JAVA_ERROR.exec(l.trim());
    if (e && !error) error = header(e[1]!, e[2]);
  }
  // Innermost first: the deepest cause's frames, then the outer sections.
  // A cause's trace repeats the enclosing frames ("... n more" aside): keep each frame once.
  const seen = new Set<string>();
  for (let i = sections.length - 1; i >= 0; i--) {
    for (const f of sections[i]!) if (f.line > 0 && !seen.has(f.raw)) { seen.add(f.raw); frames.push(f); }
  }
  return { language: 'java', ...(error ? { error } : {}), causes, frames };
}

function parseGo(lines: string[]): ParsedTrace {
  const frames: Frame[] = [];
  let error: ErrorHeader | undefined;
  let inFirstGoroutine = false;
  let seenGoroutine = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const p = GO_PANIC.exec(l.trim());
    if (p && !error) {
      error = header(p[1]!, p[2]);
      continue;
    }
    if (GO_GOROUTINE.test(l.trim())) {
      inFirstGoroutine = !seenGoroutine;
      seenGoroutine = true;
      continue;
    }
    const loc = GO_LOCATION.exec(l);
    if (loc && (inFirstGoroutine || !seenGoroutine)) {
      const fnLine = (lines[i - 1] ?? '').trim();
      const fn = fnLine.replace(/\([^()]*\)$/, '');
      frames.push({ language: 'go', ...(fn && !GO_LOCATION.test(lines[i - 1] ?? '') ? { fn } : {}), file: loc[1]!, line: Number(loc[2]), raw: `${fnLine} ${l.trim()}`.trim() });
    }
  }
  return { language: 'go', ...(error ? { error } : {}), causes: [], frames };
}

/** Parses a trace or error log; language detected from the frame syntax. */
export function parseTrace(text: string): ParsedTrace {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const language = detect(lines);
  switch (language) {
    case 'node': return parseNode(lines);
    case 'python': return parsePython(lines);
    case 'java': return parseJava(lines);
    case 'go': return parseGo(lines);
    default: {
      // No frames: still recognise a bare error line (a log without a stack).
      for (const l of lines) {
        const go = GO_PANIC.exec(l.trim());
        if (go) return { language: 'go', error: header(go[1]!, go[2]), causes: [], frames: [] };
        const j = JAVA_ERROR.exec(l.trim());
        if (j) return { language: 'java', error: header(j[1]!, j[2]), causes: [], frames: [] };
        const n = NODE_ERROR.exec(l) ?? /\b((?:[A-Z]\w*)?Error)(?: \[(\w+)\])?: (.+)$/.exec(l);
        if (n) {
          const h = header(n[1]!, n[3]);
          if (n[2] && !h.code) h.code = n[2];
          return { language: 'unknown', error: h, causes: [], frames: [] };
        }
      }
      // An error-level log line naming a system error code (ECONNREFUSED...).
      for (const l of lines) {
        const level = /\b(ERROR|FATAL|CRIT(?:ICAL)?|SEVERE|WARN(?:ING)?)\b:?\s*(.*)$/.exec(l);
        const code = NODE_CODE.exec(l)?.[1];
        if (level && code) return { language: 'unknown', error: { type: 'Error', message: level[2]!.trim(), code }, causes: [], frames: [] };
      }
      return { language: 'unknown', causes: [], frames: [] };
    }
  }
}

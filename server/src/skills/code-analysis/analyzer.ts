/**
 * Code analysis of one JavaScript / TypeScript file: one walk of the TypeScript parser's tree
 * (ts.createSourceFile, no type checker, no program) in source order. Each function gets a scope;
 * assignments update what its variables carry as they are met, so a value sanitized before its use
 * is clean at the sink (flow-sensitive on straight-line code; inside branches and loops an
 * assignment adds taint but never removes it). Sinks are checked where they are called; the
 * pattern rules (weak crypto, JWT secrets, cookies, ReDoS, TLS) need no taint.
 */
import * as ts from 'typescript';
import * as k from './kinds';
import safeRegex from 'safe-regex2';
import { fingerprint, normalizeLine, type Finding, type Range } from '../findings/finding';
import { CODE_RULE_BY_ID, type CodeRuleId } from './rules';
import { redactSnippet } from './snippet';
import { calleeName, dottedName, isConstant, isSanitizerCall, REQUEST_NAMES, sourceOf, taintOf, through, unwrap, type Taint, type TaintEnv } from './taint';

// Module-level copies: under a CommonJS transform every `k.x` / `ts.x` read is a getter call, and these run on every node.
const { isArrayLiteralExpression, isArrowFunction, isBinaryExpression, isBlock, isBreakStatement, isCallExpression, isConstructorDeclaration, isContinueStatement, isElementAccessExpression, isExpressionStatement, isForInStatement, isFunctionDeclaration, isFunctionExpression, isGetAccessorDeclaration, isIdentifier, isJsxExpression, isMethodDeclaration, isNamedImports, isNamespaceImport, isNewExpression, isNoSubstitutionTemplateLiteral, isNumericLiteral, isObjectBindingPattern, isObjectLiteralExpression, isOmittedExpression, isPropertyAccessExpression, isPropertyAssignment, isReturnStatement, isSetAccessorDeclaration, isShorthandPropertyAssignment, isSourceFile, isStringLiteral, isTaggedTemplateExpression, isTemplateExpression, isThrowStatement, isVariableDeclaration, isVariableDeclarationList, isVariableStatement } = k;
const SK = ts.SyntaxKind;
const NodeFlags = ts.NodeFlags;

export interface CodeAnalysis {
  findings: Finding[];
  parseErrors: number;
}

const JS_KIND: Record<string, ts.ScriptKind> = {
  '.ts': ts.ScriptKind.TS, '.mts': ts.ScriptKind.TS, '.cts': ts.ScriptKind.TS, '.tsx': ts.ScriptKind.TSX,
  '.js': ts.ScriptKind.JS, '.mjs': ts.ScriptKind.JS, '.cjs': ts.ScriptKind.JS, '.jsx': ts.ScriptKind.JSX,
};

export function scriptKindOf(file: string): ts.ScriptKind {
  const m = /\.[^./]+$/.exec(file);
  return JS_KIND[m ? m[0].toLowerCase() : ''] ?? ts.ScriptKind.TS;
}

export function parseSource(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKindOf(file));
}

const ROUTE_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'del', 'all', 'use', 'options', 'head', 'route', 'createServer', 'on', 'addHook', 'handler']);
/** Type names of the request objects of Node HTTP frameworks (word-bounded: `CommitRequest` is not one). */
const REQUEST_TYPES = /\b(?:Request|IncomingMessage|NextRequest|NextApiRequest|FastifyRequest|Context|ParameterizedContext|RouterContext|HttpRequest|Req|any|unknown)\b/;
const NEXT_HANDLERS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'handler', 'middleware', 'loader', 'action']);
const SQL_METHODS = new Set(['query', 'execute', 'executeQuery', 'raw', 'whereRaw', 'orWhereRaw', 'havingRaw', 'joinRaw', 'orderByRaw', 'groupByRaw', '$queryRawUnsafe', '$executeRawUnsafe', 'prepare', 'all', 'run', 'each', 'exec', 'literal']);
/** Names that are SQL only (not also Array, RegExp or sqlite-less methods): tainted text there is SQL injection whatever it says. */
const SQL_ONLY = new Set(['query', 'execute', 'executeQuery', 'raw', 'whereRaw', 'orWhereRaw', 'havingRaw', 'joinRaw', 'orderByRaw', 'groupByRaw', '$queryRawUnsafe', '$executeRawUnsafe']);
const SQL_TEXT = /\b(?:select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from|where\b|order\s+by)\b/i;
const SQL_STRONG_TEXT = /\b(?:select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from)\b/i;
/** MongoDB / Mongoose filter methods (not `count`, `where`, `update`: too common on other stores to read as Mongo without types). */
const NOSQL_METHODS = new Set(['find', 'findOne', 'findOneAndUpdate', 'findOneAndDelete', 'findOneAndRemove', 'findOneAndReplace', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany', 'countDocuments', 'replaceOne']);
const SHELL_FNS = new Set(['exec', 'execSync']);
const SPAWN_FNS = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync', 'fork']);
const SHELLS = /^(?:\/(?:usr\/)?bin\/)?(?:sh|bash|zsh|dash|cmd(?:\.exe)?|powershell(?:\.exe)?|pwsh)$/;
const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'fs-extra', 'graceful-fs']);
const FS_METHODS = new Set([
  'readFile', 'readFileSync', 'writeFile', 'writeFileSync', 'appendFile', 'appendFileSync', 'createReadStream', 'createWriteStream',
  'unlink', 'unlinkSync', 'rm', 'rmSync', 'rmdir', 'rmdirSync', 'readdir', 'readdirSync', 'stat', 'statSync', 'lstat', 'lstatSync',
  'access', 'accessSync', 'open', 'openSync', 'mkdir', 'mkdirSync', 'copyFile', 'copyFileSync', 'rename', 'renameSync', 'exists', 'existsSync',
  'readJson', 'readJsonSync', 'outputFile', 'remove', 'move', 'copy', 'chmod', 'chmodSync', 'truncate', 'symlink', 'readlink',
]);
const HTTP_CLIENT_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'request', 'fetch', 'stream', 'options']);
const CLIENT_MODULES = new Set(['axios', 'got', 'request', 'needle', 'superagent', 'undici', 'ky', 'http', 'https', 'node:http', 'node:https', 'node-fetch', 'cross-fetch']);
const RESPONSE_NAMES = /^(?:res|response|reply|resp|rep)$/;
const HTML_METHODS = new Set(['send', 'write', 'end']);
const MERGE_FNS = new Set(['merge', 'mergeWith', 'defaultsDeep', 'deepmerge', 'deepMerge', 'mergeDeep', 'assignDeep', 'extend', 'deepExtend', 'mixin']);
const SET_PATH_FNS = new Set(['set', 'setWith', 'setValue', 'setProperty', 'dset']);
const PATH_SETTERS = /^(?:_|lodash|objectPath|dotProp|dot|dset|setValue|objPath)$/;
const WEAK_HASHES = /^(?:md4|md5|sha1|sha-1|ripemd160|rmd160)$/i;
const WEAK_CIPHERS = /(?:^|-)(?:des|des3|des-ede3?|rc2|rc4|bf|blowfish|cast5?|idea|seed)(?:-|$)|-ecb$|^rc4|^des/i;
const SECRETISH = /pass(?:word|wd|phrase)?\b|pwd|secret|credential|pin\b|passwd/i;
const SESSION_COOKIE = /sess|sid|token|auth|jwt|login|remember|csrf|xsrf/i;
const CHILD_PROCESS = new Set(['child_process', 'node:child_process']);
const TIMERS = new Set(['setTimeout', 'setInterval', 'setImmediate']);
const VM_RUN = new Set(['runInNewContext', 'runInThisContext', 'runInContext', 'compileFunction']);
/** Every callee name a sink or pattern rule looks at (besides the file's own bindings of child_process, fs and HTTP clients). */
const SINK_NAMES: ReadonlySet<string> = new Set([
  'eval', 'Function', 'Script', 'require', 'RegExp', 'fetch', 'redirect', 'location', 'setHeader', 'header', 'set', 'sendFile', 'download',
  'write', 'writeln', 'insertAdjacentHTML', 'createHash', 'md5', 'sha1', 'createCipher', 'createDecipher', 'createCipheriv', 'createDecipheriv',
  'sign', 'verify', 'cookie', 'session', 'expressSession', 'cookieSession',
  ...VM_RUN, ...TIMERS, ...SHELL_FNS, ...SPAWN_FNS, ...SQL_METHODS, ...NOSQL_METHODS, ...FS_METHODS, ...HTTP_CLIENT_METHODS, ...HTML_METHODS,
  ...MERGE_FNS, ...SET_PATH_FNS,
]);

interface Scope {
  parent?: Scope;
  vars: Map<string, Taint | null>;
  requests: Set<string>;
  /** Branch depth at the function's start: assignments deeper than it add taint but never clear it. */
  baseDepth: number;
}

function isFunctionLike(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return isFunctionDeclaration(n) || isFunctionExpression(n) || isArrowFunction(n) || isMethodDeclaration(n)
    || isConstructorDeclaration(n) || isGetAccessorDeclaration(n) || isSetAccessorDeclaration(n);
}

function exits(s: ts.Statement): boolean {
  if (isReturnStatement(s) || isThrowStatement(s) || isContinueStatement(s) || isBreakStatement(s)) return true;
  if (isBlock(s)) return s.statements.length > 0 && exits(s.statements[s.statements.length - 1]!);
  if (isExpressionStatement(s) && isCallExpression(s.expression)) {
    // `res.status(400).send(...)` as the branch's last word: Express handlers often end that way.
    const t = s.expression.getText();
    return /\b(?:next|reject|res\.\w+|reply\.\w+)\(/.test(t) && /\b(?:send|end|json|redirect|sendStatus|next|reject|render)\(/.test(t);
  }
  return false;
}

/** Analyzes one file (parsed here unless `sf` is given). Findings are unsuppressed and not scoped to a diff. */
export function analyzeCode(file: string, text: string, sf: ts.SourceFile = parseSource(file, text)): CodeAnalysis {
  // Read once: each property of the lazily loaded compiler is a getter (kinds.ts).
  const forEachChild = ts.forEachChild;
  const parseErrors = (sf as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics?.length ?? 0;
  const lines = text.split(/\r?\n/);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const rangeOf = (node: ts.Node): Range => {
    const s = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    const e = sf.getLineAndCharacterOfPosition(node.end);
    return { startLine: s.line + 1, startColumn: s.character + 1, endLine: e.line + 1, endColumn: e.character + 1 };
  };
  /** Nodes a taint rule reported: the pattern rule for the same call stays quiet. */
  const reported = new Set<ts.Node>();
  const add = (ruleId: CodeRuleId, node: ts.Node, message: string): void => {
    const rule = CODE_RULE_BY_ID.get(ruleId)!;
    const range = rangeOf(node);
    const key = `${ruleId}:${range.startLine}:${range.startColumn}`;
    if (seen.has(key)) return;
    seen.add(key);
    reported.add(node);
    const line = lines[range.startLine - 1] ?? '';
    findings.push({
      ruleId, severity: rule.severity, message: `${message} (${rule.cwe})`, file, range,
      snippet: redactSnippet(line.trim()),
      fingerprint: fingerprint(ruleId, file, normalizeLine(line)),
    });
  };
  const flow = (t: Taint, sink: string): string => `${[t.source, ...t.path].join(' → ')} → ${sink}`;
  const text_ = (n: ts.Node): string => {
    const s = n.getText(sf).replace(/\s+/g, ' ');
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  };

  // Module bindings: which local names are child_process, fs, http clients, vm.
  const cpNamespaces = new Set<string>();
  const cpFunctions = new Map<string, string>();
  const fsNamespaces = new Set<string>(['fs', 'fsp', 'fse', 'fsPromises']);
  const fsFunctions = new Set<string>();
  const clientNames = new Set<string>(['axios', 'got', 'request', 'needle', 'superagent', 'fetch', 'ky', 'http', 'https', 'undici']);
  const constNames = new Set<string>();
  const constStrings = new Map<string, string>();
  /** Functions of this file that merge recursively without a __proto__ guard (user-written deep merges). */
  const mergeFns = new Set(MERGE_FNS);

  const moduleOf = (e: ts.Expression | undefined): string | undefined => {
    if (!e) return undefined;
    e = unwrap(e);
    if (isCallExpression(e) && isIdentifier(e.expression) && e.expression.text === 'require' && e.arguments[0] && isStringLiteral(e.arguments[0])) return e.arguments[0].text;
    if (isPropertyAccessExpression(e)) {
      const m = moduleOf(e.expression);
      return m && FS_MODULES.has(m) && e.name.text === 'promises' ? 'fs/promises' : undefined;
    }
    return undefined;
  };
  const bindModule = (mod: string, local: string | undefined, named: Array<{ imported: string; local: string }>): void => {
    if (CHILD_PROCESS.has(mod)) {
      if (local) cpNamespaces.add(local);
      for (const n of named) cpFunctions.set(n.local, n.imported);
    } else if (FS_MODULES.has(mod)) {
      if (local) fsNamespaces.add(local);
      for (const n of named) if (FS_METHODS.has(n.imported)) fsFunctions.add(n.local);
    } else if (CLIENT_MODULES.has(mod)) {
      if (local) clientNames.add(local);
      for (const n of named) if (n.imported === 'default' || HTTP_CLIENT_METHODS.has(n.imported)) clientNames.add(n.local);
    }
  };

  let scope: Scope = { vars: new Map(), requests: new Set(), baseDepth: 0 };
  let depth = 0;
  const lookup = (name: string): { scope: Scope; t: Taint | null } | undefined => {
    for (let s: Scope | undefined = scope; s; s = s.parent) if (s.vars.has(name)) return { scope: s, t: s.vars.get(name)! };
    return undefined;
  };
  const env: TaintEnv = {
    variable: (name) => lookup(name)?.t,
    isRequest: (name) => {
      for (let s: Scope | undefined = scope; s; s = s.parent) {
        if (s.requests.has(name)) return true;
        if (s.vars.has(name)) return false;
      }
      return false;
    },
    text: (n) => text_(n),
  };
  const taint = (e: ts.Expression | undefined): Taint | null => taintOf(e, env);

  const declare = (name: string, t: Taint | null): void => {
    scope.vars.set(name, t ? through(t, name) : null);
  };
  const assign = (name: string, t: Taint | null): void => {
    const found = lookup(name);
    const target = found?.scope ?? scope;
    // Inside a branch or loop the old value may survive: keep its taint.
    if (!t && depth > scope.baseDepth && found?.t) return;
    target.vars.set(name, t ? through(t, name) : null);
  };
  const bindPattern = (name: ts.BindingName, t: Taint | null, decl: boolean): void => {
    if (isIdentifier(name)) (decl ? declare : assign)(name.text, t);
    else for (const el of name.elements) if (!isOmittedExpression(el)) bindPattern(el.name, t, decl);
  };

  /** Is `fn` registered as an HTTP handler (`app.get('/x', fn)`, `export function GET(request)`)? */
  const isHandler = (fn: ts.FunctionLikeDeclaration): boolean => {
    const p = fn.parent;
    if (p && isCallExpression(p) && p.arguments.includes(fn as ts.Expression)) {
      const n = calleeName(p.expression);
      return !!n && ROUTE_METHODS.has(n);
    }
    if (p && isPropertyAssignment(p) && isIdentifier(p.name) && p.name.text === 'handler') return true;
    const named = isFunctionDeclaration(fn) ? fn.name?.text
      : isVariableDeclaration(p) && isIdentifier(p.name) ? p.name.text : undefined;
    const exported = isFunctionDeclaration(fn) ? !!fn.modifiers?.some((m) => m.kind === SK.ExportKeyword)
      : !!(p && isVariableDeclaration(p) && p.parent?.parent && isVariableStatement(p.parent.parent) && p.parent.parent.modifiers?.some((m) => m.kind === SK.ExportKeyword));
    return (exported && !!named && NEXT_HANDLERS.has(named)) || (isFunctionDeclaration(fn) && !!fn.modifiers?.some((m) => m.kind === SK.DefaultKeyword) && /(?:^|\/)(?:pages\/api|app)\//.test(file));
  };

  const pendingParams = new Map<ts.Node, Taint>();
  const enterFunction = (fn: ts.FunctionLikeDeclaration): void => {
    const handler = isHandler(fn);
    const passed = pendingParams.get(fn);
    fn.parameters.forEach((p, i) => {
      if (isIdentifier(p.name)) {
        const n = p.name.text;
        // A `req` typed as something else (`req: CommitRequest`) is not an HTTP request; untyped (JS) or typed as one is.
        const typed = p.type ? REQUEST_TYPES.test(p.type.getText(sf)) : true;
        if ((REQUEST_NAMES.has(n) && typed) || (handler && i === 0)) { scope.requests.add(n); scope.vars.delete(n); return; }
        declare(n, passed && i === 0 ? passed : null);
        return;
      }
      // `({ query, body }, res) =>`, `GET(request, { params })`, `Page({ searchParams })`.
      if (isObjectBindingPattern(p.name)) {
        for (const el of p.name.elements) {
          const prop = el.propertyName && isIdentifier(el.propertyName) ? el.propertyName.text : isIdentifier(el.name) ? el.name.text : '';
          const src = (handler && i <= 1 && ['query', 'body', 'params', 'headers', 'cookies', 'searchParams'].includes(prop)) || prop === 'searchParams';
          bindPattern(el.name, src ? { source: prop, path: [], raw: prop === 'body' || prop === 'query' } : passed ?? null, true);
        }
        return;
      }
      bindPattern(p.name, passed ?? null, true);
    });
  };

  /** Call sinks and pattern rules. */
  const checkCall = (call: ts.CallExpression | ts.NewExpression): void => {
    const callee = unwrap(call.expression);
    const name = calleeName(callee);
    // Most calls are no sink: leave before reading anything else about them.
    if (!name || !(SINK_NAMES.has(name) || cpFunctions.has(name) || fsFunctions.has(name) || clientNames.has(name) || mergeFns.has(name))) return;
    const isNew = isNewExpression(call);
    const args = call.arguments ?? ([] as readonly ts.Expression[]);
    const a0 = args[0];
    const recv = isPropertyAccessExpression(callee) ? unwrap(callee.expression) : undefined;
    const recvName = recv ? dottedName(recv) : undefined;
    const recvRoot = recvName?.split('.')[0];
    if (!name) return;

    // Code evaluation.
    const isEval = (!isNew && isIdentifier(callee) && name === 'eval')
      || (!isNew && isPropertyAccessExpression(callee) && name === 'eval' && !!recvName && ['globalThis', 'window', 'global', 'self'].includes(recvName));
    const isFunctionCtor = isIdentifier(callee) && name === 'Function';
    if (isEval || isFunctionCtor) {
      const t = isEval ? taint(a0) : args.map(taint).find((x) => x) ?? null;
      if (t) add('code/code-injection', call, `request input evaluated as code: ${flow(t, `${isEval ? 'eval' : 'Function'}()`)}`);
      else if (isEval ? a0 && !isConstant(a0, constNames) : args.some((a) => !isConstant(a, constNames))) {
        add('review/eval', call, isEval ? '`eval()` runs code built from a non-constant string; parse data (JSON.parse) or use a lookup instead' : `\`${isNew ? 'new ' : ''}Function()\` compiles code from a non-constant string, like eval`);
      }
      return;
    }
    if ((VM_RUN.has(name) && (recvName === 'vm' || !recv)) || (isNew && name === 'Script' && (recvName === 'vm' || !recv))) {
      const t = taint(a0);
      if (t) add('code/code-injection', call, `request input run by the vm module: ${flow(t, `vm.${name}()`)}`);
      return;
    }
    if (TIMERS.has(name) && !recv && a0 && !isFunctionLike(unwrap(a0)) && !isIdentifier(unwrap(a0))) {
      const t = taint(a0);
      if (t) add('code/code-injection', call, `request input passed to ${name} as a string of code: ${flow(t, `${name}()`)}`);
      return;
    }
    if (!isNew && isIdentifier(callee) && name === 'require' && a0 && !isStringLiteral(a0)) {
      const t = taint(a0);
      if (t) add('code/code-injection', call, `request input chooses the module to load: ${flow(t, 'require()')}`);
      return;
    }
    if ((name === 'RegExp') && (!recv)) {
      const t = taint(a0);
      if (t) add('code/regex-injection', call, `request input compiled as a regular expression: ${flow(t, 'new RegExp()')}; escape it (escapeRegExp) or match literally`);
      else if (a0 && isStringLiteral(a0)) checkRegex(call, a0.text);
      return;
    }

    // Commands.
    const isCp = isIdentifier(callee) ? cpFunctions.has(callee.text)
      : !!recv && ((!!recvName && cpNamespaces.has(recvName)) || moduleOf(recv) !== undefined && CHILD_PROCESS.has(moduleOf(recv)!));
    const cpName = isIdentifier(callee) ? cpFunctions.get(callee.text) ?? name : name;
    if (isCp && SHELL_FNS.has(cpName)) {
      const t = taint(a0);
      if (t) add('code/command-injection', call, `request input in a shell command: ${flow(t, `${cpName}()`)}; use execFile/spawn with an argument array`);
      else if (a0 && isBuilt(a0)) add('review/shell-injection', call, 'shell command built from a template literal or concatenation: use execFile/spawn with an argument array');
      return;
    }
    if (isCp && SPAWN_FNS.has(cpName)) {
      const opts = args.find((a) => isObjectLiteralExpression(unwrap(a))) as ts.ObjectLiteralExpression | undefined;
      const shell = !!opts && unwrap(opts).kind === SK.ObjectLiteralExpression && (unwrap(opts) as ts.ObjectLiteralExpression).properties.some((p) =>
        isPropertyAssignment(p) && isIdentifier(p.name) && p.name.text === 'shell' && unwrap(p.initializer).kind !== SK.FalseKeyword);
      const viaShell = !!a0 && isStringLiteral(a0) && SHELLS.test(a0.text);
      const cmdT = taint(a0);
      const argsT = args[1] && isArrayLiteralExpression(unwrap(args[1])) ? taint(args[1]) : null;
      if (cmdT) add('code/command-injection', call, `request input chooses the program run: ${flow(cmdT, `${cpName}()`)}`);
      else if (argsT && (shell || viaShell)) add('code/command-injection', call, `request input in a command run through a shell: ${flow(argsT, `${cpName}(${viaShell ? (a0 as ts.StringLiteral).text + ' -c' : '…, { shell: true }'})`)}`);
      return;
    }

    // SQL.
    if (SQL_METHODS.has(name) && recv && a0 && !isObjectLiteralExpression(unwrap(a0)) && !isTaggedTemplateExpression(unwrap(a0))) {
      const t = taint(a0);
      const s = builtText(a0);
      const sqlish = SQL_ONLY.has(name) || (s !== undefined && SQL_TEXT.test(s));
      if (t && sqlish) add('code/sql-injection', call, `request input in SQL text: ${flow(t, `${text_(callee)}()`)}; use placeholders (?, $1) and pass the values separately`);
      else if (!t && s !== undefined && SQL_STRONG_TEXT.test(s) && SQL_ONLY.has(name) && isBuilt(a0)) {
        add('review/sql-concatenation', call, `SQL built by string concatenation/template passed to \`${name}()\`: use a parameterized query`);
      }
      if (t || (s !== undefined && SQL_ONLY.has(name))) return;
    }

    // NoSQL.
    if (NOSQL_METHODS.has(name) && recv && a0) {
      const f = unwrap(a0);
      if (isObjectLiteralExpression(f)) {
        for (const p of f.properties) {
          if (isPropertyAssignment(p) && (isIdentifier(p.name) || isStringLiteral(p.name)) && p.name.text === '$where') {
            const t = taint(p.initializer);
            if (t) { add('code/nosql-injection', p, `request input in a MongoDB $where JavaScript condition: ${flow(t, `${name}({ $where })`)}`); return; }
          }
        }
      }
      if (!isFunctionLike(f)) {
        const t = taint(a0);
        if (t?.raw) {
          add('code/nosql-injection', call, `request input used as a query filter without a type check (an object like {"$ne": null} matches anything): ${flow(t, `${name}()`)}; cast with String() or validate the type`);
          return;
        }
      }
    }

    // Files.
    const isFs = (isIdentifier(callee) && fsFunctions.has(callee.text))
      || (!!recvName && FS_METHODS.has(name) && (fsNamespaces.has(recvName) || fsNamespaces.has(recvName.replace(/\.promises$/, '')) || (recv !== undefined && moduleOf(recv) !== undefined && FS_MODULES.has(moduleOf(recv)!))));
    if (isFs) {
      const t = [a0, name.startsWith('rename') || name.startsWith('copy') || name === 'move' ? args[1] : undefined].map(taint).find((x) => x && !x.guarded);
      if (t) add('code/path-traversal', call, `request input names a file: ${flow(t, `${text_(callee)}()`)}; path.join keeps "../", use path.basename or resolve and check the prefix`);
      return;
    }
    if ((name === 'sendFile' || name === 'download') && recvRoot && RESPONSE_NAMES.test(recvRoot)) {
      const rooted = args.slice(1).some((a) => { const o = unwrap(a); return isObjectLiteralExpression(o) && o.properties.some((p) => p.name && isIdentifier(p.name) && p.name.text === 'root'); });
      const t = taint(a0);
      if (t && !t.guarded && !rooted) add('code/path-traversal', call, `request input names the file sent: ${flow(t, `res.${name}()`)}`);
      return;
    }

    // Outbound requests.
    const clientCall = (!recv && (clientNames.has(name) || name === 'fetch')) || (!!recvRoot && clientNames.has(recvRoot) && HTTP_CLIENT_METHODS.has(name) && !env.isRequest(recvRoot));
    if (clientCall && a0) {
      const u = unwrap(a0);
      const urlExpr = isObjectLiteralExpression(u)
        ? u.properties.find((p): p is ts.PropertyAssignment => isPropertyAssignment(p) && isIdentifier(p.name) && ['url', 'host', 'hostname', 'uri', 'baseURL'].includes(p.name.text))?.initializer
        : a0;
      const t = taint(urlExpr);
      if (t && !t.guarded) add('code/ssrf', call, `request input decides the URL fetched: ${flow(t, `${text_(callee)}()`)}; check it against an allow-list of hosts`);
      return;
    }

    // Redirects and headers.
    if (name === 'redirect' && recvRoot && (RESPONSE_NAMES.test(recvRoot) || recvRoot === 'ctx' || recvRoot === 'h' || recvRoot === 'NextResponse' || recvRoot === 'Response')) {
      const target = args.length > 1 && !isStringLiteral(unwrap(args[args.length - 1]!)) ? args[args.length - 1] : a0;
      const t = taint(isNumericLiteral(unwrap(target ?? ts.factory.createNull())) ? args[1] : target);
      if (t && !t.guarded) add('code/open-redirect', call, `request input is the redirect target: ${flow(t, `${recvRoot}.redirect()`)}; redirect to a path from an allow-list or check it is relative`);
      return;
    }
    if (!recv && name === 'redirect' && a0) {
      // Next.js `redirect(url)` from next/navigation.
      const t = taint(a0);
      if (t && !t.guarded) add('code/open-redirect', call, `request input is the redirect target: ${flow(t, 'redirect()')}`);
      return;
    }
    if ((name === 'location' && recvRoot && RESPONSE_NAMES.test(recvRoot))
      || ((name === 'setHeader' || name === 'header' || name === 'set') && recvRoot && RESPONSE_NAMES.test(recvRoot) && a0 && isStringLiteral(a0) && a0.text.toLowerCase() === 'location')) {
      const t = taint(name === 'location' ? a0 : args[1]);
      if (t && !t.guarded) add('code/open-redirect', call, `request input is the Location header: ${flow(t, `${recvRoot}.${name}()`)}`);
      return;
    }

    // HTML responses and the DOM.
    if (HTML_METHODS.has(name) && recvRoot && RESPONSE_NAMES.test(recvRoot) && a0) {
      const u = unwrap(a0);
      const t = isObjectLiteralExpression(u) ? null : taint(a0);
      // The whole parsed body or query sent back is JSON, not markup.
      const whole = t && t.path.length === 0 && /\.(?:body|query|params|headers|cookies)$/.test(t.source) && !isTemplateExpression(u) && !isBinaryExpression(u);
      const json = text_(callee).includes('.json(') || text_(callee).includes("type('json')") || text_(callee).includes('type("application/json")');
      if (t && !whole && !json && !isArrayLiteralExpression(u)) add('code/xss', call, `request input written into the response unescaped: ${flow(t, `${recvRoot}.${name}()`)}; escape it (escape-html) or send JSON`);
      return;
    }
    if ((name === 'write' || name === 'writeln') && recvName === 'document') {
      const t = taint(a0);
      if (t) add('code/xss', call, `input written into the page: ${flow(t, 'document.write()')}`);
      return;
    }
    if (name === 'insertAdjacentHTML' && args[1]) {
      const t = taint(args[1]);
      if (t) add('code/xss', call, `input inserted as HTML: ${flow(t, 'insertAdjacentHTML()')}`);
      return;
    }

    // Prototype pollution.
    if (mergeFns.has(name) && args.length >= 2) {
      const deep = name !== 'extend' || (a0 !== undefined && unwrap(a0).kind === SK.TrueKeyword) || recvRoot === '_' || recvRoot === 'lodash';
      const t = args.slice(1).map(taint).find((x) => x?.raw);
      if (deep && t) add('code/prototype-pollution', call, `request object merged deeply: ${flow(t, `${text_(callee)}()`)}; a "__proto__" key reaches Object.prototype (merge into Object.create(null) or pick known keys)`);
      return;
    }
    if (SET_PATH_FNS.has(name) && recvRoot && PATH_SETTERS.test(recvRoot) && args[1]) {
      const t = taint(args[1]);
      if (t) add('code/prototype-pollution', call, `request input is the property path set: ${flow(t, `${text_(callee)}()`)}; a "__proto__.x" path writes to Object.prototype`);
      return;
    }

    // Pattern rules.
    if (name === 'createHash' && a0 && isStringLiteral(a0) && WEAK_HASHES.test(a0.text)) {
      const stmt = enclosingStatement(call);
      if (SECRETISH.test(stmt.getText(sf))) add('code/weak-hash', call, `${a0.text} hashes a password or secret: use bcrypt, scrypt or argon2 (crypto.scrypt)`);
      return;
    }
    if (!recv && (name === 'md5' || name === 'sha1') && a0 && SECRETISH.test(a0.getText(sf))) {
      add('code/weak-hash', call, `${name} hashes a password or secret: use bcrypt, scrypt or argon2`);
      return;
    }
    if ((name === 'createCipher' || name === 'createDecipher') && recv) {
      add('code/weak-cipher', call, `crypto.${name} derives the key without salt and uses no IV (deprecated): use createCipheriv with AES-256-GCM`);
      return;
    }
    if ((name === 'createCipheriv' || name === 'createDecipheriv') && a0) {
      const alg = isStringLiteral(a0) ? a0.text : isIdentifier(a0) ? constStrings.get(a0.text) : undefined;
      if (alg && WEAK_CIPHERS.test(alg)) add('code/weak-cipher', call, `${alg} is a broken cipher or mode: use aes-256-gcm`);
      return;
    }
    if ((name === 'sign' || name === 'verify') && recvName && /^(?:jwt|jsonwebtoken|JWT|jws)$/.test(recvName) && args[1]) {
      const s = unwrap(args[1]);
      const lit = isStringLiteral(s) || isNoSubstitutionTemplateLiteral(s) ? s.text : isIdentifier(s) ? constStrings.get(s.text) : undefined;
      if (lit !== undefined && lit.length > 0) add('code/hardcoded-jwt-secret', call, `jwt.${name} with a secret written in the code: read it from the environment or a secret store`);
      return;
    }
    if (name === 'cookie' && recvRoot && RESPONSE_NAMES.test(recvRoot) && a0) {
      checkCookie(call, a0, args[2]);
      return;
    }
    if (name === 'set' && recvName && /\.cookies$/.test(recvName) && a0) {
      checkCookie(call, a0, args[2]);
      return;
    }
    if (/^(?:session|expressSession|cookieSession)$/.test(name) && a0 && isObjectLiteralExpression(unwrap(a0))) {
      const o = unwrap(a0) as ts.ObjectLiteralExpression;
      const cookie = o.properties.find((p): p is ts.PropertyAssignment => isPropertyAssignment(p) && isIdentifier(p.name) && p.name.text === 'cookie');
      const flags = cookie && isObjectLiteralExpression(unwrap(cookie.initializer)) ? unwrap(cookie.initializer) as ts.ObjectLiteralExpression : name === 'cookieSession' ? o : undefined;
      const off = flags ? falseFlags(flags) : [];
      if (off.length) add('code/insecure-cookie', call, `session cookie with ${off.map((f) => `${f}: false`).join(' and ')}`);
    }
  };

  const falseFlags = (o: ts.ObjectLiteralExpression): string[] => o.properties.flatMap((p) =>
    isPropertyAssignment(p) && isIdentifier(p.name) && (p.name.text === 'httpOnly' || p.name.text === 'secure') && unwrap(p.initializer).kind === SK.FalseKeyword ? [p.name.text] : []);

  const checkCookie = (call: ts.CallExpression | ts.NewExpression, nameArg: ts.Expression, optsArg: ts.Expression | undefined): void => {
    const o = optsArg ? unwrap(optsArg) : undefined;
    if (o && isObjectLiteralExpression(o)) {
      const off = falseFlags(o);
      if (off.length) { add('code/insecure-cookie', call, `cookie set with ${off.map((f) => `${f}: false`).join(' and ')}`); return; }
    }
    const cookieName = isStringLiteral(nameArg) ? nameArg.text : undefined;
    if (!cookieName || !SESSION_COOKIE.test(cookieName)) return;
    if (o && !isObjectLiteralExpression(o)) return; // options built elsewhere: not known here
    const have = new Set(o && isObjectLiteralExpression(o) ? o.properties.flatMap((p) => (p.name && isIdentifier(p.name) ? [p.name.text] : [])) : []);
    const missing = ['httpOnly', 'secure'].filter((f) => !have.has(f));
    if (missing.length) add('code/insecure-cookie', call, `session cookie "${cookieName}" set without ${missing.join(' and ')}`);
  };

  const checkRegex = (node: ts.Node, pattern: string): void => {
    // Only patterns with a group under a quantifier can nest quantifiers: skip the rest cheaply.
    if (!/\)[*+?{]/.test(pattern) && !/\)\s*[*+{]/.test(pattern)) return;
    let safe = true;
    try { safe = safeRegex(pattern, { limit: 1000 }); } catch { return; }
    if (!safe && !separatedRepeats(pattern)) add('code/redos', node, `regular expression with nested quantifiers /${pattern.length > 40 ? `${pattern.slice(0, 40)}…` : pattern}/ backtracks exponentially on crafted input`);
  };

  const enclosingStatement = (n: ts.Node): ts.Node => {
    let cur = n;
    while (cur.parent && !isSourceFile(cur.parent) && !isBlock(cur.parent)) cur = cur.parent;
    return cur;
  };

  /** Initializers of identifiers (for a built string named by a variable). */
  const inits = new Map<string, ts.Expression>();
  /** A part of a built string that cannot carry code: a constant, a sanitizer's result, or a variable holding one. */
  const safePart = (e: ts.Expression, d = 0): boolean => {
    const u = unwrap(e);
    if (isConstant(u, constNames) || isSanitizerCall(u)) return true;
    if (isIdentifier(u) && d < 5) { const i = inits.get(u.text); return !!i && i !== u && safePart(i, d + 1); }
    return false;
  };
  /** The dynamic parts of a template or concatenation. */
  const dynamicParts = (e: ts.Expression): ts.Expression[] => {
    const u = unwrap(e);
    if (isTemplateExpression(u)) return u.templateSpans.map((sp) => sp.expression);
    if (isBinaryExpression(u) && u.operatorToken.kind === SK.PlusToken) return [...dynamicParts(u.left), ...dynamicParts(u.right)];
    return isStringLiteral(u) || isNoSubstitutionTemplateLiteral(u) ? [] : [u];
  };
  /** A string built at run time from something not known to be safe (a template or `+` with a literal part). */
  const isBuilt = (e: ts.Expression, d = 0): boolean => {
    const u = unwrap(e);
    if (isIdentifier(u)) { const i = inits.get(u.text); return !!i && i !== u && d < 5 && isBuilt(i, d + 1); }
    return (isTemplateExpression(u) || (isBinaryExpression(u) && u.operatorToken.kind === SK.PlusToken))
      && builtText(u) !== undefined && !dynamicParts(u).every((p) => safePart(p));
  };
  /** The literal text of a string built at run time (template or `+` with a literal part), undefined otherwise. */
  const builtText = (e: ts.Expression, d = 0): string | undefined => {
    const u = unwrap(e);
    if (d > 5) return undefined;
    if (isIdentifier(u)) { const i = inits.get(u.text); return i ? builtText(i, d + 1) : undefined; }
    if (isTemplateExpression(u)) return u.head.text + u.templateSpans.map((s) => ` ${s.literal.text}`).join('');
    if (isBinaryExpression(u) && u.operatorToken.kind === SK.PlusToken) {
      const parts: ts.Expression[] = [];
      const flat = (x: ts.Expression): void => {
        x = unwrap(x);
        if (isBinaryExpression(x) && x.operatorToken.kind === SK.PlusToken) { flat(x.left); flat(x.right); } else parts.push(x);
      };
      flat(u);
      const lits = parts.filter((p) => isStringLiteral(p) || isNoSubstitutionTemplateLiteral(p)) as Array<ts.StringLiteral>;
      if (lits.length === 0 || lits.length === parts.length) return undefined;
      return [...lits.map((l) => l.text), ...parts.filter(ts.isTemplateExpression).map((p) => builtText(p, d + 1) ?? '')].join(' ');
    }
    return undefined;
  };

  /** Assignments to properties: DOM sinks, Koa bodies, nested computed keys. */
  const checkAssignment = (n: ts.BinaryExpression, t: Taint | null): void => {
    const l = unwrap(n.left);
    if (isPropertyAccessExpression(l)) {
      const prop = l.name.text;
      if ((prop === 'innerHTML' || prop === 'outerHTML') && t) add('code/xss', n, `input assigned to ${prop}: ${flow(t, prop)}; use textContent or sanitize (DOMPurify)`);
      else if (prop === 'body' && dottedName(l.expression) === 'ctx' && t && !t.raw && /</.test(n.right.getText(sf))) add('code/xss', n, `request input in an HTML body: ${flow(t, 'ctx.body')}`);
      if (prop === 'NODE_TLS_REJECT_UNAUTHORIZED') tlsEnv(n);
    } else if (isElementAccessExpression(l)) {
      if (isStringLiteral(l.argumentExpression) && l.argumentExpression.text === 'NODE_TLS_REJECT_UNAUTHORIZED') tlsEnv(n);
      // obj[a][b] = v with a request-controlled a: a = "__proto__" writes Object.prototype[b].
      const inner = unwrap(l.expression);
      if (isElementAccessExpression(inner)) {
        const k1 = taint(inner.argumentExpression);
        const k2 = taint(l.argumentExpression);
        if (k1 && (k2 || taint(n.right))) add('code/prototype-pollution', n, `request-controlled keys in a nested assignment: ${flow(k1, `${text_(l)} =`)}; reject "__proto__", "constructor" and "prototype" keys`);
      }
    }
  };
  const tlsEnv = (n: ts.BinaryExpression): void => {
    const r = unwrap(n.right);
    if ((isStringLiteral(r) && r.text === '0') || (isNumericLiteral(r) && r.text === '0')) {
      add('review/tls-disabled', n, '`NODE_TLS_REJECT_UNAUTHORIZED = 0` turns off TLS certificate verification for the whole process');
    }
  };

  /** `if (!target.startsWith(root)) return;`: the names checked by a call in the condition are guarded after it. */
  const applyGuard = (n: ts.IfStatement): void => {
    if (n.elseStatement || !exits(n.thenStatement)) return;
    const names = new Set<string>();
    const collect = (x: ts.Node): void => {
      if (isCallExpression(x)) {
        const c = unwrap(x.expression);
        const root = (e: ts.Expression): void => { const d = dottedName(e); if (d) names.add(d.split('.')[0]!); };
        if (isPropertyAccessExpression(c)) root(c.expression);
        for (const a of x.arguments) root(a);
      }
      forEachChild(x, collect);
    };
    collect(n.expression);
    for (const name of names) {
      const found = lookup(name);
      if (found?.t) found.scope.vars.set(name, { ...found.t, guarded: true });
    }
  };

  const BRANCHING = new Set([SK.IfStatement, SK.ConditionalExpression, SK.SwitchStatement, SK.ForStatement,
    SK.ForInStatement, SK.ForOfStatement, SK.WhileStatement, SK.DoStatement, SK.TryStatement, SK.CatchClause]);

  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node) && node.body) {
      const outer = scope;
      scope = { parent: outer, vars: new Map(), requests: new Set(), baseDepth: depth };
      enterFunction(node);
      forEachChild(node, visit);
      scope = outer;
      return;
    }
    switch (node.kind) {
      case SK.ImportDeclaration: {
        const n = node as ts.ImportDeclaration;
        if (isStringLiteral(n.moduleSpecifier) && n.importClause) {
          const c = n.importClause;
          const local = c.name?.text ?? (c.namedBindings && isNamespaceImport(c.namedBindings) ? c.namedBindings.name.text : undefined);
          const named = c.namedBindings && isNamedImports(c.namedBindings)
            ? c.namedBindings.elements.map((el) => ({ imported: (el.propertyName ?? el.name).text, local: el.name.text })) : [];
          bindModule(n.moduleSpecifier.text, local, named);
        }
        return;
      }
      case SK.VariableDeclaration: {
        const n = node as ts.VariableDeclaration;
        const mod = moduleOf(n.initializer);
        if (mod) {
          if (isIdentifier(n.name)) bindModule(mod, n.name.text, []);
          else if (isObjectBindingPattern(n.name)) {
            bindModule(mod, undefined, n.name.elements.flatMap((el) => {
              const imported = el.propertyName && isIdentifier(el.propertyName) ? el.propertyName.text : isIdentifier(el.name) ? el.name.text : '';
              return isIdentifier(el.name) ? [{ imported, local: el.name.text }] : [];
            }));
          }
          return;
        }
        const t = n.initializer ? taint(n.initializer) : null;
        if (n.initializer) visit(n.initializer);
        if (isIdentifier(n.name)) {
          if (n.initializer) inits.set(n.name.text, n.initializer);
          const isConst = !!(n.parent.flags & NodeFlags.Const);
          if (isConst && n.initializer && isConstant(n.initializer, constNames)) {
            constNames.add(n.name.text);
            const u = unwrap(n.initializer);
            if (isStringLiteral(u) || isNoSubstitutionTemplateLiteral(u)) constStrings.set(n.name.text, u.text);
          } else constNames.delete(n.name.text);
        }
        bindPattern(n.name, t, true);
        return;
      }
      case SK.BinaryExpression: {
        const n = node as ts.BinaryExpression;
        const op = n.operatorToken.kind;
        if (op === SK.EqualsToken || op === SK.PlusEqualsToken || op === SK.BarBarEqualsToken || op === SK.QuestionQuestionEqualsToken) {
          const t = op === SK.EqualsToken ? taint(n.right) : taint(n.left) ?? taint(n.right);
          visit(n.right);
          const l = unwrap(n.left);
          checkAssignment(n, t);
          if (isIdentifier(l)) {
            assign(l.text, op === SK.PlusEqualsToken && t ? { ...t, raw: false } : t);
            if (op === SK.EqualsToken) inits.set(l.text, n.right);
            constNames.delete(l.text);
          } else if ((isPropertyAccessExpression(l) || isElementAccessExpression(l)) && t) {
            // `opts.where = req.body`: the object now holds the input (weak update, never clears).
            const base = dottedName(l.expression)?.split('.')[0];
            if (base && base !== 'this' && lookup(base)) { const f = lookup(base)!; f.scope.vars.set(base, f.t ?? through(t, base)); }
            visit(l);
          } else if (isObjectLiteralExpression(l) || isArrayLiteralExpression(l)) {
            forEachChild(l, (c) => { if (isShorthandPropertyAssignment(c)) assign(c.name.text, t); });
          } else visit(l);
          return;
        }
        break;
      }
      case SK.ForOfStatement:
      case SK.ForInStatement: {
        const n = node as ts.ForOfStatement | ts.ForInStatement;
        const t = taint(n.expression);
        visit(n.expression);
        depth++;
        const init = n.initializer;
        const bound = t ? (isForInStatement(n) ? { ...t, raw: false } : t) : null;
        if (isVariableDeclarationList(init)) for (const d of init.declarations) bindPattern(d.name, bound, true);
        else if (isIdentifier(init)) assign(init.text, bound);
        visit(n.statement);
        depth--;
        return;
      }
      case SK.IfStatement: {
        const n = node as ts.IfStatement;
        visit(n.expression);
        depth++;
        visit(n.thenStatement);
        if (n.elseStatement) visit(n.elseStatement);
        depth--;
        applyGuard(n);
        return;
      }
      case SK.CallExpression:
      case SK.NewExpression: {
        const n = node as ts.CallExpression | ts.NewExpression;
        checkCall(n);
        // Callbacks of methods on tainted data get it as their first parameter (`Object.keys(req.body).forEach((k) => ...)`).
        const c = unwrap(n.expression);
        if (isPropertyAccessExpression(c) && n.arguments && n.arguments.some((a) => isFunctionLike(a))) {
          const rt = taint(c.expression);
          if (rt) for (const a of n.arguments) if (isFunctionLike(a)) pendingParams.set(a, { ...rt, raw: c.name.text === 'forEach' && isCallExpression(unwrap(c.expression)) ? false : rt.raw });
        }
        break;
      }
      case SK.RegularExpressionLiteral: {
        const m = /^\/(.*)\/[a-z]*$/s.exec((node as ts.RegularExpressionLiteral).text);
        if (m) checkRegex(node, m[1]!);
        return;
      }
      case SK.PropertyAssignment: {
        const n = node as ts.PropertyAssignment;
        const key = isIdentifier(n.name) || isStringLiteral(n.name) ? n.name.text : '';
        const v = unwrap(n.initializer);
        if (key === 'rejectUnauthorized' && (v.kind === SK.FalseKeyword || (isNumericLiteral(v) && v.text === '0'))) {
          add('review/tls-disabled', n, '`rejectUnauthorized: false` turns off TLS certificate verification');
        }
        break;
      }
      case SK.JsxAttribute: {
        const n = node as ts.JsxAttribute;
        if (isIdentifier(n.name) && n.name.text === 'dangerouslySetInnerHTML' && n.initializer && isJsxExpression(n.initializer) && n.initializer.expression) {
          const o = unwrap(n.initializer.expression);
          const html = isObjectLiteralExpression(o)
            ? o.properties.find((p): p is ts.PropertyAssignment => isPropertyAssignment(p) && isIdentifier(p.name) && p.name.text === '__html')?.initializer : undefined;
          const t = html ? taint(html) : null;
          if (t) add('code/xss', n, `request input rendered as HTML: ${flow(t, 'dangerouslySetInnerHTML')}; sanitize it (DOMPurify) or render text`);
        }
        break;
      }
      default:
        break;
    }
    if (BRANCHING.has(node.kind)) {
      depth++;
      forEachChild(node, visit);
      depth--;
      return;
    }
    forEachChild(node, visit);
  };

  // User-written recursive merges without a guard count as deep merges (the classic prototype-pollution gadget).
  for (const st of sf.statements) {
    if (isFunctionDeclaration(st) && st.name && st.body) {
      const body = st.body.getText(sf);
      const name = st.name.text;
      if (new RegExp(`\\b${name}\\s*\\(`).test(body) && /\bfor\s*\(\s*(?:const|let|var)\s+\w+\s+in\b|Object\.keys\(/.test(body)
        && /\w\[\w+\]\s*=/.test(body) && !/__proto__|hasOwnProperty|hasOwn\(|['"]constructor['"]/.test(body)) mergeFns.add(name);
    }
  }
  visit(sf);
  return { findings, parseErrors };
}

/**
 * safe-regex2 counts star height only, so `(?:\.[a-z]+)*` (a repeated group that must start with a
 * literal the inner repeat cannot match) looks as dangerous as `(a+)+`. It is linear: each round of
 * the outer repeat is anchored by its separator. True when every repeated group holding a
 * quantifier starts with such a literal.
 */
export function separatedRepeats(pattern: string): boolean {
  const groups: Array<{ body: string; repeated: boolean }> = [];
  const stack: number[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') { i++; continue; }
    if (inClass) { if (c === ']') inClass = false; continue; }
    if (c === '[') inClass = true;
    else if (c === '(') stack.push(i);
    else if (c === ')' && stack.length) {
      const start = stack.pop()!;
      const next = pattern[i + 1];
      // Unbounded repeats only: `{2,7}` and `{3}` cap the backtracking.
      const repeated = next === '*' || next === '+' || (next === '{' && /^\{\d*,\}/.test(pattern.slice(i + 1)));
      groups.push({ body: pattern.slice(start + 1, i).replace(/^\?(?::|=|!|<[=!]|<\w+>)/, ''), repeated });
    }
  }
  const nested = groups.filter((g) => g.repeated && /(?:[^\\]|^)[*+]|\{\d*,\}/.test(g.body));
  // No unbounded repeat inside an unbounded repeat (safe-regex2 also counts `?` and `{3}`): linear.
  if (nested.length === 0) return true;
  return nested.every((g) => {
    if (g.body.includes('|')) return false;
    // The atoms every round must match; if one character fits them all, a run of it splits into rounds
    // in exponentially many ways (`(a+)+`, `(\w+\s?)*`). A separator no other atom matches (`(\d+\.)*`) prevents that.
    const mandatory: string[] = [];
    for (const m of g.body.matchAll(/(\\.|\[(?:\\.|[^\]])*\]|[^\\[\]()|])([*+?]|\{(\d*),?\d*\})?\??/g)) {
      const q = m[2];
      if (q === '*' || q === '?' || (q?.startsWith('{') && (m[3] === '' || m[3] === '0'))) continue;
      if (/^\?[:=!<]?$/.test(m[1]!) && m[1] !== '\\?') continue;
      mandatory.push(m[1]!);
    }
    if (mandatory.length === 0) return false;
    const res = mandatory.map((a) => { try { return new RegExp(`^${a === '.' ? '[^\\n]' : a}$`); } catch { return undefined; } });
    if (res.some((r) => !r)) return false;
    for (let c = 9; c < 127; c++) {
      const ch = String.fromCharCode(c);
      if (res.every((r) => r!.test(ch))) return false;
    }
    return true;
  });
}

/** Whether a source expression is read directly (exported for tests of the source table). */
export function isRequestSource(expr: string): boolean {
  const sf = parseSource('x.ts', `(${expr});`);
  const st = sf.statements[0];
  if (!st || !isExpressionStatement(st)) return false;
  const env: TaintEnv = { variable: () => undefined, isRequest: (n) => REQUEST_NAMES.has(n), text: (n) => n.getText(sf) };
  return sourceOf(st.expression, env) !== null;
}

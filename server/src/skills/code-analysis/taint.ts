/**
 * Intra-procedural taint: which expressions carry a request input. Sources are the request objects
 * of Express / Koa / Fastify / Next.js handlers (and the DOM's location for client code); taint flows
 * through assignments, destructuring, template literals, concatenation, property reads and the
 * common pass-through calls; sanitizers (parseInt, encodeURIComponent, escape-html, path.basename...)
 * stop it. Calls to unknown functions stop it too: the analysis is intra-procedural, and guessing
 * that every helper passes its input through would report sanitized code as vulnerable.
 */
import * as ts from 'typescript';
import * as k from './kinds';

// Module-level copies: under a CommonJS transform every `k.x` / `ts.x` read is a getter call, and these run on every node.
const { isArrayLiteralExpression, isAsExpression, isAwaitExpression, isBinaryExpression, isCallExpression, isConditionalExpression, isElementAccessExpression, isIdentifier, isNewExpression, isNoSubstitutionTemplateLiteral, isNonNullExpression, isNumericLiteral, isObjectLiteralExpression, isParenthesizedExpression, isPropertyAccessExpression, isPropertyAssignment, isSatisfiesExpression, isShorthandPropertyAssignment, isSpreadAssignment, isSpreadElement, isStringLiteral, isTaggedTemplateExpression, isTemplateExpression, isTypeAssertionExpression } = k;
const SK = ts.SyntaxKind;

export interface Taint {
  /** The source expression as written (`req.query.id`). */
  source: string;
  /** Variables the value went through, in order. */
  path: string[];
  /** The value may be an object or array (a parsed body or query string), not only a string. */
  raw: boolean;
  /** Checked by a guard that exits (`if (!p.startsWith(root)) return`): not a path, URL or redirect finding. */
  guarded?: boolean;
}

/** Properties of a request object that hold what the client sent. Value: may it be an object (qs, JSON body)? */
export const SOURCE_PROPS: ReadonlyMap<string, boolean> = new Map([
  ['query', true], ['body', true], ['params', false], ['headers', false], ['cookies', true], ['signedCookies', true],
  ['url', false], ['originalUrl', false], ['files', true], ['file', true], ['rawBody', false], ['querystring', false],
  ['search', false], ['searchParams', false], ['nextUrl', false], ['hash', false], ['href', false], ['host', false],
]);

/** Request-object methods whose result is client data (`req.get('X-Forwarded-Host')`, `await request.json()`). */
const SOURCE_METHODS: ReadonlyMap<string, boolean> = new Map([
  ['get', false], ['header', false], ['param', false], ['json', true], ['text', false], ['formData', true],
]);

/** Parameter names that are a request (or Koa context) in a handler, whatever registers it. */
export const REQUEST_NAMES: ReadonlySet<string> = new Set(['req', 'request', 'ctx']);

/** Browser sources for DOM XSS: `location.hash`, `document.URL`... */
const DOM_SOURCES = /^(?:(?:window\.|document\.)?location\.(?:hash|search|href|pathname)|document\.(?:URL|documentURI|referrer)|window\.name)$/;

/** Calls that return their (first) tainted argument's data: the taint goes through. */
const PASS_THROUGH_FNS: ReadonlySet<string> = new Set([
  'String', 'decodeURIComponent', 'decodeURI', 'unescape', 'JSON.parse', 'Buffer.from', 'path.join', 'path.resolve',
  'path.normalize', 'path.posix.join', 'path.win32.join', 'url.parse', 'util.format', 'format', 'Object.assign',
  'structuredClone', 'Array.from', 'Object.values', 'Object.entries', 'Object.keys', 'querystring.parse', 'qs.parse',
  'join', 'resolve', 'normalize', 'URL', 'new URL', 'new URLSearchParams', 'Object.fromEntries', 'atob', 'Array.of',
]);

/** Calls that make a value safe whatever the sink (numbers, booleans, escapes, the last path segment). */
const SANITIZER_FNS: ReadonlySet<string> = new Set([
  'parseInt', 'parseFloat', 'Number', 'Boolean', 'Number.parseInt', 'Number.parseFloat', 'Math.floor', 'Math.round',
  'Math.abs', 'Math.min', 'Math.max', 'encodeURIComponent', 'escape', 'escapeHtml', 'escapeHTML', 'htmlEscape',
  'he.encode', 'he.escape', 'validator.escape', 'xss', 'filterXSS', 'DOMPurify.sanitize', 'sanitize', 'sanitizeHtml',
  'path.basename', 'basename', 'mysql.escape', 'mysql.escapeId', 'SqlString.escape', 'sqlstring.escape', 'pg.escapeLiteral',
  '_.escape', 'lodash.escape', 'escapeRegExp', '_.escapeRegExp', 'escapeStringRegexp', 'isNaN', 'Array.isArray',
  'ObjectId', 'new ObjectId', 'mongoose.Types.ObjectId', 'new mongoose.Types.ObjectId', 'Types.ObjectId', 'sanitizeFilter',
  'mongoSanitize.sanitize', 'uuidValidate',
]);
/** Method names that sanitize whatever their receiver (`validator.escape(x)`, `connection.escape(x)`). */
const SANITIZER_METHODS: ReadonlySet<string> = new Set(['escape', 'escapeId', 'escapeLiteral', 'escapeIdentifier', 'sanitize', 'basename', 'toNumber']);

/** String/array methods whose result is not client text (booleans, numbers, positions). */
const NON_DATA_METHODS: ReadonlySet<string> = new Set([
  'startsWith', 'endsWith', 'includes', 'test', 'has', 'indexOf', 'lastIndexOf', 'localeCompare', 'some', 'every',
  'findIndex', 'charCodeAt', 'codePointAt', 'hasOwnProperty', 'isValid', 'getTime', 'valueOf',
]);
/** Methods that turn anything into a string (the value is no longer an object). */
const STRINGIFYING_METHODS: ReadonlySet<string> = new Set([
  'toString', 'trim', 'trimStart', 'trimEnd', 'toLowerCase', 'toUpperCase', 'toLocaleLowerCase', 'toLocaleUpperCase',
  'slice', 'substring', 'substr', 'replace', 'replaceAll', 'padStart', 'padEnd', 'concat', 'normalize', 'repeat', 'at', 'charAt', 'join',
]);

export function unwrap(e: ts.Expression): ts.Expression {
  while (isParenthesizedExpression(e) || isAsExpression(e) || isNonNullExpression(e) || isTypeAssertionExpression(e)
    || isSatisfiesExpression(e) || isAwaitExpression(e)) e = e.expression;
  return e;
}

/** `a.b.c` as text (identifiers and property names only), or undefined for other shapes. */
export function dottedName(e: ts.Expression): string | undefined {
  e = unwrap(e);
  if (isIdentifier(e)) return e.text;
  if (e.kind === SK.ThisKeyword) return 'this';
  if (isPropertyAccessExpression(e)) {
    const left = dottedName(e.expression);
    return left === undefined ? undefined : `${left}.${e.name.text}`;
  }
  return undefined;
}

/** The last name of a callee: `db.query` → `query`, `exec` → `exec`. */
export function calleeName(e: ts.Expression): string | undefined {
  e = unwrap(e);
  if (isIdentifier(e)) return e.text;
  if (isPropertyAccessExpression(e)) return e.name.text;
  if (isElementAccessExpression(e) && isStringLiteral(e.argumentExpression)) return e.argumentExpression.text;
  return undefined;
}

/** What the taint walk needs from the analyzer: variables in scope and request names. */
export interface TaintEnv {
  variable(name: string): Taint | null | undefined;
  isRequest(name: string): boolean;
  text(node: ts.Node): string;
}

const MAX_PATH = 6;

export function through(t: Taint, name: string): Taint {
  if (t.path[t.path.length - 1] === name) return t;
  return { ...t, path: t.path.length >= MAX_PATH ? [...t.path.slice(1), name] : [...t.path, name] };
}

function stringy(t: Taint | null): Taint | null {
  return t && t.raw ? { ...t, raw: false } : t;
}

function firstOf(args: readonly ts.Expression[], env: TaintEnv, depth: number): Taint | null {
  for (const a of args) { const t = taintOf(a, env, depth); if (t) return t; }
  return null;
}

/** The request-input source an expression reads directly (`req.query.id`, `ctx.request.body`), if any. */
export function sourceOf(e: ts.Expression, env: TaintEnv): Taint | null {
  e = unwrap(e);
  if (isPropertyAccessExpression(e) || isElementAccessExpression(e)) {
    const names: string[] = [];
    let cur: ts.Expression = e;
    while (isPropertyAccessExpression(cur) || isElementAccessExpression(cur)) {
      names.unshift(isPropertyAccessExpression(cur) ? cur.name.text : isStringLiteral(cur.argumentExpression) ? cur.argumentExpression.text : '*');
      cur = unwrap(cur.expression);
    }
    if (isIdentifier(cur) && env.isRequest(cur.text)) {
      // `ctx.request.body`, `req.raw.headers`: the request object behind the context or wrapper.
      const i = names[0] === 'request' || names[0] === 'raw' || names[0] === 'req' ? 1 : 0;
      const prop = names[i];
      if (prop !== undefined && SOURCE_PROPS.has(prop)) return { source: env.text(e), path: [], raw: SOURCE_PROPS.get(prop)! };
    }
    const dotted = dottedName(e);
    if (dotted && DOM_SOURCES.test(dotted)) return { source: dotted, path: [], raw: false };
  }
  return null;
}

/** The name a call is known by in the tables: `path.join`, `new URL`, `parseInt`. */
function callKey(callee: ts.Expression, isNew: boolean): string | undefined {
  const d = dottedName(callee);
  return d === undefined ? undefined : isNew ? `new ${d}` : d;
}

/** The taint an expression carries, or null. */
export function taintOf(expr: ts.Expression | undefined, env: TaintEnv, depth = 0): Taint | null {
  if (!expr || depth > 40) return null;
  const e = unwrap(expr);
  const d = depth + 1;
  if (isIdentifier(e)) {
    const v = env.variable(e.text);
    return v ?? null;
  }
  const src = sourceOf(e, env);
  if (src) return src;
  if (isPropertyAccessExpression(e)) {
    // Lengths and sizes are numbers, whatever the object.
    if (e.name.text === 'length' || e.name.text === 'size') return null;
    return taintOf(e.expression, env, d);
  }
  if (isElementAccessExpression(e)) return taintOf(e.expression, env, d);
  if (isTemplateExpression(e)) {
    for (const sp of e.templateSpans) { const t = taintOf(sp.expression, env, d); if (t) return stringy(t); }
    return null;
  }
  if (isTaggedTemplateExpression(e)) return null;
  if (isBinaryExpression(e)) {
    const op = e.operatorToken.kind;
    if (op === SK.PlusToken || op === SK.PlusEqualsToken) return stringy(taintOf(e.left, env, d) ?? taintOf(e.right, env, d));
    if (op === SK.BarBarToken || op === SK.QuestionQuestionToken) return taintOf(e.left, env, d) ?? taintOf(e.right, env, d);
    if (op === SK.AmpersandAmpersandToken || op === SK.CommaToken || op === SK.EqualsToken) return taintOf(e.right, env, d);
    return null;
  }
  if (isConditionalExpression(e)) return taintOf(e.whenTrue, env, d) ?? taintOf(e.whenFalse, env, d);
  if (isArrayLiteralExpression(e)) {
    for (const x of e.elements) {
      const t = taintOf(isSpreadElement(x) ? x.expression : x, env, d);
      if (t) return { ...t, raw: true };
    }
    return null;
  }
  if (isObjectLiteralExpression(e)) {
    for (const p of e.properties) {
      const t = isPropertyAssignment(p) ? taintOf(p.initializer, env, d)
        : isShorthandPropertyAssignment(p) ? taintOf(p.name, env, d)
          : isSpreadAssignment(p) ? taintOf(p.expression, env, d) : null;
      // An object holding an input as is stays "raw" (the input may itself be an object: operator injection).
      if (t) return t;
    }
    return null;
  }
  if (isCallExpression(e) || isNewExpression(e)) {
    const isNew = isNewExpression(e);
    const args = e.arguments ?? ([] as readonly ts.Expression[]);
    const key = callKey(e.expression, isNew);
    const name = calleeName(e.expression);
    if ((key && SANITIZER_FNS.has(key)) || (name && SANITIZER_METHODS.has(name) && isPropertyAccessExpression(unwrap(e.expression)))) return null;
    const callee = unwrap(e.expression);
    if (isPropertyAccessExpression(callee)) {
      // `req.get('host')`, `await request.json()`: request methods that return client data.
      const recv = unwrap(callee.expression);
      if (isIdentifier(recv) && env.isRequest(recv.text) && SOURCE_METHODS.has(callee.name.text)) {
        return { source: env.text(e), path: [], raw: SOURCE_METHODS.get(callee.name.text)! };
      }
      if (key && PASS_THROUGH_FNS.has(key)) return stringyFor(key, firstOf(args, env, d));
      if (NON_DATA_METHODS.has(callee.name.text)) return null;
      // A method called on tainted data returns tainted data (`name.trim()`, `params.get('q')`, `list.map(f)`).
      const recvT = taintOf(callee.expression, env, d);
      if (recvT) return STRINGIFYING_METHODS.has(callee.name.text) ? stringy(recvT) : recvT;
      // `'a'.concat(x)`, `[a, b].join()`: the receiver is constant, the arguments carry the data.
      if (callee.name.text === 'concat') return stringy(firstOf(args, env, d));
      return null;
    }
    if (key && PASS_THROUGH_FNS.has(key)) return stringyFor(key, firstOf(args, env, d));
    return null;
  }
  if (isSpreadElement(e)) return taintOf(e.expression, env, d);
  return null;
}

function stringyFor(key: string, t: Taint | null): Taint | null {
  return key === 'JSON.parse' || key.startsWith('Object.') || key === 'structuredClone' || key.includes('URLSearchParams') || key.endsWith('.parse') ? t : stringy(t);
}

/** A call to a sanitizer (its result is a number, an escaped string or a last path segment). */
export function isSanitizerCall(expr: ts.Expression): boolean {
  const e = unwrap(expr);
  if (!isCallExpression(e) && !isNewExpression(e)) return false;
  const key = callKey(e.expression, isNewExpression(e));
  const name = calleeName(e.expression);
  return (!!key && SANITIZER_FNS.has(key)) || (!!name && SANITIZER_METHODS.has(name) && isPropertyAccessExpression(unwrap(e.expression)));
}

/** A value known at compile time: literals, templates and concatenations of literals, numbers, booleans. */
export function isConstant(expr: ts.Expression | undefined, constNames: ReadonlySet<string>, depth = 0): boolean {
  if (!expr || depth > 20) return false;
  const e = unwrap(expr);
  if (isStringLiteral(e) || isNoSubstitutionTemplateLiteral(e) || isNumericLiteral(e)
    || e.kind === SK.TrueKeyword || e.kind === SK.FalseKeyword || e.kind === SK.NullKeyword) return true;
  if (isIdentifier(e)) return constNames.has(e.text) || e.text === 'undefined';
  if (isTemplateExpression(e)) return e.templateSpans.every((s) => isConstant(s.expression, constNames, depth + 1));
  if (isBinaryExpression(e)) return isConstant(e.left, constNames, depth + 1) && isConstant(e.right, constNames, depth + 1);
  if (isConditionalExpression(e)) return isConstant(e.whenTrue, constNames, depth + 1) && isConstant(e.whenFalse, constNames, depth + 1);
  // A table of constants, and a value picked from one (`SORTABLE[req.query.sort] ?? 'id'`): whatever the key, the value is one of the table's.
  if (isObjectLiteralExpression(e)) return e.properties.every((p) => isPropertyAssignment(p) && isConstant(p.initializer, constNames, depth + 1));
  if (isArrayLiteralExpression(e)) return e.elements.every((x) => isConstant(x, constNames, depth + 1));
  if (isElementAccessExpression(e)) return isIdentifier(unwrap(e.expression)) && constNames.has((unwrap(e.expression) as ts.Identifier).text);
  return false;
}

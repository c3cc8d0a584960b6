/**
 * A built-in knowledge base of common error causes. Each entry matches the error text
 * (`Type: message`) of a parsed trace; the first matching entry (table order, specific before
 * generic) is the classification. Scope: frequent runtime failures of Node, Python, Java and Go
 * plus language-neutral system errors (connection refused, missing file, port in use, timeouts,
 * permissions). Anything else is reported as unclassified.
 */
import type { ErrorHeader, TraceLanguage } from './trace-parser';

export type CauseCategory = 'null-dereference' | 'network' | 'filesystem' | 'configuration' | 'dependency' | 'resource' | 'concurrency' | 'bounds' | 'logic' | 'timeout' | 'permission';

export interface CauseEntry {
  id: string;
  title: string;
  category: CauseCategory;
  /** Languages the entry applies to; absent = any. */
  languages?: Array<Exclude<TraceLanguage, 'unknown'>>;
  /** Tested against `Type: message` (and the Node error code). */
  pattern: RegExp;
  explanation: string;
  fix: string;
}

export const CAUSES: readonly CauseEntry[] = [
  // ---- null dereferences
  { id: 'node-null-deref', title: 'Property access on undefined/null', category: 'null-dereference', languages: ['node'],
    pattern: /TypeError: (Cannot (read|set) propert(y|ies) of (undefined|null)|(undefined|null) is not an object|\S+ is (undefined|null)\b)/,
    explanation: 'A value expected to be an object was undefined or null when one of its properties was read or written.',
    fix: 'Check where the value comes from (missing argument, absent record, unresolved promise) and guard it with optional chaining or an explicit check before use.' },
  { id: 'python-none-attribute', title: 'Attribute or item access on None', category: 'null-dereference', languages: ['python'],
    pattern: /(AttributeError: 'NoneType' object has no attribute|TypeError: 'NoneType' object is not (subscriptable|iterable|callable))/,
    explanation: 'A function returned None (or a variable was never set) and the code used it as an object.',
    fix: 'Find the call that returned None (a lookup that found nothing, a function without return) and check `is None` before using the value.' },
  { id: 'java-npe', title: 'NullPointerException', category: 'null-dereference', languages: ['java'],
    pattern: /NullPointerException/,
    explanation: 'A method was invoked or a field read on a null reference.',
    fix: 'Check the reference named in the message (helpful NPE messages say which) for null, or make it non-null at construction (Objects.requireNonNull, Optional).' },
  { id: 'go-nil-deref', title: 'Nil pointer dereference', category: 'null-dereference', languages: ['go'],
    pattern: /nil pointer dereference/,
    explanation: 'A nil pointer (often a struct pointer or an interface holding nil) was dereferenced.',
    fix: 'Check the pointer for nil before use, and check the error returned alongside it: a nil value usually comes with a non-nil err that was ignored.' },
  // ---- language-neutral system errors
  { id: 'econnrefused', title: 'Connection refused', category: 'network',
    pattern: /ECONNREFUSED|Connection refused|ConnectException|connect: connection refused/i,
    explanation: 'Nothing listened on the target host and port: the dependency (database, API, cache) is down, not started yet, or the address is wrong.',
    fix: 'Verify the service is running and the host/port configuration (environment variables, service names in containers); add retry with backoff on start-up.' },
  { id: 'eaddrinuse', title: 'Address already in use', category: 'configuration',
    pattern: /EADDRINUSE|address already in use|BindException/i,
    explanation: 'The process tried to listen on a port another process (often a previous instance) holds.',
    fix: 'Stop the other process or choose another port (make it configurable); in tests, listen on port 0.' },
  { id: 'enoent', title: 'File or directory not found', category: 'filesystem',
    pattern: /ENOENT|FileNotFoundError|FileNotFoundException|NoSuchFileException|no such file or directory/i,
    explanation: 'A path that was opened does not exist, often a relative path resolved against an unexpected working directory.',
    fix: 'Resolve the path against a known base (the module directory or a configured root), and check the file exists or create it first.' },
  { id: 'permission-denied', title: 'Permission denied', category: 'permission',
    pattern: /EACCES|EPERM|PermissionError|AccessDeniedException|permission denied|operation not permitted/i,
    explanation: 'The process lacks the rights for a file, directory, port (< 1024) or operation.',
    fix: 'Fix ownership/modes of the path, run with the needed rights, or use an unprivileged port or location.' },
  { id: 'timeout', title: 'Timeout', category: 'timeout',
    pattern: /ETIMEDOUT|ESOCKETTIMEDOUT|TimeoutError|TimeoutException|SocketTimeoutException|timed? ?out|deadline exceeded/i,
    explanation: 'An operation did not complete in its time limit: a slow or unreachable dependency, or a limit set too low.',
    fix: 'Check the dependency latency and reachability, set explicit timeouts with retries and backoff, and look for blocking work on the request path.' },
  // ---- Node
  { id: 'node-esm-cjs', title: 'ES module / CommonJS mix', category: 'configuration', languages: ['node'],
    pattern: /ERR_REQUIRE_ESM|require\(\) of ES Module|require is not defined in ES module scope|Cannot use import statement outside a module|exports is not defined in ES module scope|ERR_UNKNOWN_FILE_EXTENSION|Must use import to load ES Module/,
    explanation: 'CommonJS code required an ES module (or ES module code used require/exports): the package\'s "type", the file extension (.mjs/.cjs) and the import style disagree.',
    fix: 'Use import() (or import) for ES-only packages, or pin a CommonJS version; set "type": "module" or rename files to .mjs/.cjs consistently; run TypeScript through a loader (tsx) or compile it first.' },
  { id: 'node-not-a-function', title: 'Value is not a function', category: 'logic', languages: ['node'],
    pattern: /TypeError: .+ is not a function/,
    explanation: 'Something called as a function is not one: a wrong import (default vs named), a typo, or a value of another type.',
    fix: 'Check the import style and the exported name, and the value\'s type at the call site.' },
  { id: 'node-reference-error', title: 'Undefined variable', category: 'logic', languages: ['node'],
    pattern: /ReferenceError: .+ is not defined/,
    explanation: 'A name is used that is not declared in scope (typo, missing import, browser-only global).',
    fix: 'Declare or import the name; check for typos.' },
  { id: 'node-esm-resolution', title: 'ES module import not found', category: 'dependency', languages: ['node'],
    pattern: /ERR_MODULE_NOT_FOUND|ERR_UNSUPPORTED_DIR_IMPORT/,
    explanation: 'An ES module import names a file or package that does not resolve: ES imports need the full file name with its extension (./util.js, not ./util) and no directory imports.',
    fix: 'Add the extension to relative imports (.js even for TypeScript sources compiled to .js), import the directory\'s index file explicitly, or install the missing package.' },
  { id: 'node-unhandled-rejection', title: 'Unhandled promise rejection', category: 'logic', languages: ['node'],
    pattern: /UnhandledPromiseRejection|ERR_UNHANDLED_REJECTION|unhandled promise rejection/i,
    explanation: 'A promise rejected and nothing awaited or caught it; since Node 15 this ends the process.',
    fix: 'Await the promise (or return it) where it is created and handle the error with try/catch or .catch(); look for a missing await or a fire-and-forget call.' },
  { id: 'node-headers-sent', title: 'Response already sent', category: 'logic', languages: ['node'],
    pattern: /ERR_HTTP_HEADERS_SENT|Cannot set headers after they are sent/,
    explanation: 'A handler wrote to the response after it was already sent: a missing return after res.send, or both a callback and the main path responding.',
    fix: 'Return right after sending a response (return res.status(400).send(...)), and make sure only one path responds.' },
  { id: 'node-stack-overflow', title: 'Stack overflow', category: 'resource', languages: ['node'],
    pattern: /RangeError: Maximum call stack size exceeded/,
    explanation: 'Unbounded recursion (a function calling itself without a base case, or two functions calling each other, often through getters or toJSON).',
    fix: 'Find the repeating frames in the trace and add or fix the base case; make deep recursion iterative.' },
  { id: 'node-json-parse', title: 'Invalid JSON', category: 'logic', languages: ['node'],
    pattern: /SyntaxError: (Unexpected token .* JSON|Unexpected end of JSON input|.* is not valid JSON)/,
    explanation: 'JSON.parse (or response.json()) got text that is not JSON: an HTML error page, an empty body or a truncated file.',
    fix: 'Log the raw text and status before parsing; check the Content-Type and the status code first.' },
  { id: 'enotfound', title: 'Host name not found', category: 'network',
    pattern: /\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|Name or service not known|UnknownHostException|no such host/,
    explanation: 'The host name did not resolve: a typo, a service name that only exists inside a container network, or no DNS.',
    fix: 'Check the host in the configuration and where the process runs (localhost vs a compose service name).' },
  { id: 'node-module-not-found', title: 'Module not found', category: 'dependency', languages: ['node'],
    pattern: /Cannot find module|ERR_MODULE_NOT_FOUND/,
    explanation: 'A required module is not installed or the import path is wrong.',
    fix: 'Install the dependency (npm install) or fix the relative path / file extension.' },
  { id: 'node-heap-oom', title: 'Heap out of memory', category: 'resource', languages: ['node'],
    pattern: /heap out of memory|Allocation failed/i,
    explanation: 'The V8 heap reached its limit: a leak or an unbounded in-memory collection.',
    fix: 'Stream data instead of buffering it, bound caches, and profile the heap; raise --max-old-space-size only once the growth is understood.' },
  // ---- Python
  { id: 'python-keyerror', title: 'Missing dictionary key', category: 'logic', languages: ['python'],
    pattern: /^KeyError/,
    explanation: 'A dict was indexed with a key it does not contain.',
    fix: 'Use dict.get(key, default) or check `key in d`; validate input that provides the key.' },
  { id: 'python-import', title: 'Import failed', category: 'dependency', languages: ['python'],
    pattern: /^(ModuleNotFoundError|ImportError)/,
    explanation: 'A module is not installed in the active environment, or the import path / name is wrong (or a circular import).',
    fix: 'Install the package into the interpreter that runs the code (pip install, check the virtualenv), or fix the module path.' },
  { id: 'python-index', title: 'Index out of range', category: 'bounds', languages: ['python'],
    pattern: /^IndexError/,
    explanation: 'A sequence was indexed past its end (often an empty list).',
    fix: 'Check the length before indexing, or iterate instead of indexing.' },
  { id: 'python-attribute', title: 'Missing attribute', category: 'logic', languages: ['python'],
    pattern: /^AttributeError/,
    explanation: 'An object does not have the attribute used (wrong type, typo, API change).',
    fix: 'Check the object\'s type and the attribute name against the library version in use.' },
  { id: 'python-zero-division', title: 'Division by zero', category: 'logic', languages: ['python'],
    pattern: /^ZeroDivisionError/,
    explanation: 'A number was divided by zero, often an empty collection\'s length.',
    fix: 'Guard the divisor (if n == 0) and decide the result for the empty case.' },
  // ---- Java
  { id: 'python-recursion', title: 'Recursion limit', category: 'resource', languages: ['python'],
    pattern: /RecursionError: maximum recursion depth exceeded/,
    explanation: 'A function recursed past the interpreter limit (about 1000 frames): a missing base case or data deeper than expected.',
    fix: 'Fix the base case or make the algorithm iterative; raising sys.setrecursionlimit only moves the crash.' },
  { id: 'python-unicode', title: 'Text encoding mismatch', category: 'configuration', languages: ['python'],
    pattern: /UnicodeDecodeError|UnicodeEncodeError/,
    explanation: 'Bytes were decoded with the wrong encoding (often the platform default instead of UTF-8).',
    fix: 'Pass encoding="utf-8" to open() / .decode(), or open binary data in "rb" mode.' },
  { id: 'python-type-args', title: 'Wrong arguments', category: 'logic', languages: ['python'],
    pattern: /TypeError: .*(missing \d+ required positional argument|takes \d+ positional arguments? but \d+ (were|was) given|got an unexpected keyword argument)/,
    explanation: 'A function was called with a different signature than it has (a changed API, a missing self, a misspelled keyword).',
    fix: 'Compare the call with the function definition; check the library version for a changed signature.' },
  { id: 'java-class-cast', title: 'Class cast', category: 'logic', languages: ['java'],
    pattern: /ClassCastException/,
    explanation: 'An object was cast to a type it is not (raw collections, deserialised data of another type).',
    fix: 'Check the type with instanceof (or pattern matching) before casting; use generics to keep the type known.' },
  { id: 'java-number-format', title: 'Number parsing', category: 'logic', languages: ['java'],
    pattern: /NumberFormatException/,
    explanation: 'Text that is not a number (empty, spaces, a decimal for Integer.parseInt) was parsed as one.',
    fix: 'Validate or trim the input first and handle the exception where user or file input is parsed.' },
  { id: 'java-class-not-found', title: 'Class not found', category: 'dependency', languages: ['java'],
    pattern: /ClassNotFoundException|NoClassDefFoundError/,
    explanation: 'A class is missing from the runtime classpath (dependency not packaged, wrong scope, version conflict).',
    fix: 'Add the dependency with runtime scope, check the packaged jar/classpath, and look for conflicting versions.' },
  { id: 'java-oom', title: 'Out of memory', category: 'resource', languages: ['java'],
    pattern: /OutOfMemoryError/,
    explanation: 'The JVM could not allocate: heap too small for the load, or a leak (growing collections, caches).',
    fix: 'Take a heap dump (-XX:+HeapDumpOnOutOfMemoryError), find the dominant retainer, bound it; size -Xmx to measured needs.' },
  { id: 'java-index', title: 'Index out of bounds', category: 'bounds', languages: ['java'],
    pattern: /IndexOutOfBoundsException/,
    explanation: 'An array, list or string was indexed outside its size.',
    fix: 'Check sizes before indexing; prefer iteration.' },
  { id: 'java-concurrent-modification', title: 'Concurrent modification', category: 'concurrency', languages: ['java'],
    pattern: /ConcurrentModificationException/,
    explanation: 'A collection was modified while being iterated.',
    fix: 'Use Iterator.remove or removeIf, or a concurrent collection when several threads share it.' },
  { id: 'java-stack-overflow', title: 'Stack overflow', category: 'resource', languages: ['java'],
    pattern: /StackOverflowError/,
    explanation: 'Unbounded recursion (often two methods calling each other, or toString/equals cycles).',
    fix: 'Find the repeating frames and add the missing base case.' },
  // ---- Go
  { id: 'go-index', title: 'Index out of range', category: 'bounds', languages: ['go'],
    pattern: /index out of range|slice bounds out of range/,
    explanation: 'A slice or array was indexed past its length.',
    fix: 'Check len() before indexing.' },
  { id: 'go-concurrent-map', title: 'Concurrent map access', category: 'concurrency', languages: ['go'],
    pattern: /concurrent map (writes|read and map write|iteration and map write)/,
    explanation: 'Several goroutines used a map without synchronisation; the runtime aborts.',
    fix: 'Protect the map with a sync.Mutex/RWMutex or use sync.Map; run the tests with -race.' },
  { id: 'go-nil-map', title: 'Write to nil map', category: 'null-dereference', languages: ['go'],
    pattern: /assignment to entry in nil map/,
    explanation: 'A map was declared but never made.',
    fix: 'Initialise it with make(map[K]V) before writing.' },
  { id: 'go-deadlock', title: 'Deadlock', category: 'concurrency', languages: ['go'],
    pattern: /all goroutines are asleep - deadlock/,
    explanation: 'Every goroutine is blocked (a channel nobody sends on or receives from, a lock never released).',
    fix: 'Check that each channel operation has a counterpart and that locks are released (defer mu.Unlock()).' },
];

export interface Classification {
  cause: CauseEntry;
  /** The error (outer or chained) that matched. */
  matched: ErrorHeader;
}

function errorText(e: ErrorHeader): string {
  const simpleType = e.type.includes('.') && !/Error$|Exception$/.test(e.type) ? e.type : e.type.split('.').pop()!;
  return `${simpleType}: ${e.message}${e.code ? ` ${e.code}` : ''}`;
}

/**
 * Classifies a trace's errors: the deepest chained cause is tried first (it is where the failure
 * started), then the outer error.
 */
export function classify(errors: ErrorHeader[], language: TraceLanguage): Classification | undefined {
  const ordered = [...errors].reverse();
  for (const e of ordered) {
    const text = errorText(e);
    for (const cause of CAUSES) {
      if (cause.languages && language !== 'unknown' && !cause.languages.includes(language)) continue;
      if (cause.pattern.test(text) || cause.pattern.test(`${e.type}: ${e.message}`)) return { cause, matched: e };
    }
  }
  return undefined;
}

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
  { id: 'node-not-a-function', title: 'Value is not a function', category: 'logic', languages: ['node'],
    pattern: /TypeError: .+ is not a function/,
    explanation: 'Something called as a function is not one: a wrong import (default vs named), a typo, or a value of another type.',
    fix: 'Check the import style and the exported name, and the value\'s type at the call site.' },
  { id: 'node-reference-error', title: 'Undefined variable', category: 'logic', languages: ['node'],
    pattern: /ReferenceError: .+ is not defined/,
    explanation: 'A name is used that is not declared in scope (typo, missing import, browser-only global).',
    fix: 'Declare or import the name; check for typos.' },
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

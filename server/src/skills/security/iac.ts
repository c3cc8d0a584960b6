/**
 * Infrastructure-as-code checks (security-ai `scan`, CORE tier: container scanning): Dockerfiles
 * and Kubernetes YAML. Line-based Dockerfile parsing (with `\` continuations); Kubernetes YAML is
 * parsed with `yaml` (all documents of a file) keeping node ranges for line numbers. Every finding
 * has a rule id, severity, message, range and fingerprint; a fix only where it is a safe text edit.
 */
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode, type YAMLMap } from 'yaml';
import { fingerprint, normalizeLine, sortFindings, toWorkspacePath, type Finding, type Fix, type Range, type RuleInfo, type Severity } from '../findings/finding';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';

export const IAC_RULES: readonly RuleInfo[] = [
  { id: 'docker/run-as-root', severity: 'high', family: 'docker', description: 'The final stage runs as root: no USER instruction, or the last USER is root / 0' },
  { id: 'docker/unpinned-image', severity: 'medium', family: 'docker', description: 'FROM uses :latest or no tag; pin the base image by digest (image@sha256:...)' },
  { id: 'docker/add-from-url', severity: 'medium', family: 'docker', description: 'ADD fetches a remote URL without --checksum; download with a verified checksum instead' },
  { id: 'docker/secret-in-env', severity: 'high', family: 'docker', description: 'ENV/ARG with a secret-like name (PASSWORD, SECRET, TOKEN, KEY) has a literal value baked into the image' },
  { id: 'docker/apt-no-install-recommends', severity: 'low', family: 'docker', description: 'apt-get install without --no-install-recommends pulls in unneeded packages' },
  { id: 'docker/curl-pipe-shell', severity: 'high', family: 'docker', description: 'A downloaded script is piped straight into a shell (curl|sh, wget|bash)' },
  { id: 'k8s/privileged', severity: 'critical', family: 'kubernetes', description: 'Container runs privileged (securityContext.privileged: true)' },
  { id: 'k8s/run-as-root', severity: 'high', family: 'kubernetes', description: 'Container may run as root: runAsUser 0, or neither runAsNonRoot: true nor a non-zero runAsUser' },
  { id: 'k8s/allow-privilege-escalation', severity: 'medium', family: 'kubernetes', description: 'securityContext.allowPrivilegeEscalation is not set to false' },
  { id: 'k8s/unpinned-image', severity: 'medium', family: 'kubernetes', description: 'Container image uses :latest or no tag; pin it by digest' },
  { id: 'k8s/missing-resource-limits', severity: 'medium', family: 'kubernetes', description: 'Container has no resources.limits for cpu and/or memory' },
  { id: 'k8s/secret-in-env', severity: 'high', family: 'kubernetes', description: 'env value with a secret-like name is a literal instead of valueFrom.secretKeyRef' },
  { id: 'k8s/host-network', severity: 'high', family: 'kubernetes', description: 'Pod shares the host network namespace (hostNetwork: true)' },
  { id: 'k8s/host-pid', severity: 'high', family: 'kubernetes', description: 'Pod shares the host PID namespace (hostPID: true)' },
  { id: 'k8s/host-ipc', severity: 'high', family: 'kubernetes', description: 'Pod shares the host IPC namespace (hostIPC: true)' },
];

const RULE_SEVERITY = new Map<string, Severity>(IAC_RULES.map((r) => [r.id, r.severity]));
const RULE_FAMILY = new Map<string, string>(IAC_RULES.map((r) => [r.id, r.family ?? '']));

/** Names that hold secrets: PASSWORD, PASSWD, SECRET, TOKEN anywhere; KEY as a `_`-separated word (API_KEY, KEY). */
export function isSecretName(name: string): boolean {
  const n = name.toUpperCase();
  return /PASSWORD|PASSWD|SECRET|TOKEN/.test(n) || /(^|_)(API|ACCESS|PRIVATE|SECRET|AUTH)?KEY(_|$)/.test(n);
}

const REDACTED = '<redacted>';

function lineRange(lines: readonly string[], line: number, startColumn = 1, endColumn?: number): Range {
  const text = lines[line - 1] ?? '';
  return { startLine: line, startColumn, endLine: line, endColumn: endColumn ?? text.length + 1 };
}

// ---------------------------------------------------------------------------------------------
// Dockerfile

export function isDockerfile(file: string): boolean {
  const base = path.posix.basename(toWorkspacePath(file));
  return /^(Dockerfile|Containerfile)([.-].+)?$/i.test(base) || /\.(dockerfile|containerfile)$/i.test(base);
}

export interface DockerInstruction {
  keyword: string;
  /** Arguments with continuations joined by a space. */
  args: string;
  /** 1-based first and last physical line. */
  startLine: number;
  endLine: number;
}

/** Instructions of a Dockerfile (comments and blank lines skipped; `\` continuations joined). */
export function parseDockerfile(text: string): DockerInstruction[] {
  const lines = text.split(/\r?\n/);
  const out: DockerInstruction[] = [];
  let cur: { parts: string[]; startLine: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const trimmed = raw.trim();
    if (!cur && (trimmed === '' || trimmed.startsWith('#'))) continue;
    if (cur && trimmed.startsWith('#')) continue; // comment lines inside a continuation
    const cont = /\\\s*$/.test(raw);
    const part = cont ? raw.replace(/\\\s*$/, '') : raw;
    if (!cur) cur = { parts: [], startLine: i + 1 };
    cur.parts.push(part.trim());
    if (!cont || i === lines.length - 1) {
      const joined = cur.parts.filter((p) => p !== '').join(' ');
      const m = /^(\S+)\s*(.*)$/.exec(joined);
      if (m) out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!, startLine: cur.startLine, endLine: i + 1 });
      cur = null;
    }
  }
  return out;
}

/** Splits an image reference into name, tag and digest. */
export function parseImageRef(ref: string): { name: string; tag?: string; digest?: string } {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) return { name: rest.slice(0, colon), tag: rest.slice(colon + 1), ...(digest ? { digest } : {}) };
  return { name: rest, ...(digest ? { digest } : {}) };
}

/** `latest` or no tag, and no digest. */
export function isUnpinnedImage(ref: string): boolean {
  const r = parseImageRef(ref);
  if (r.digest) return false;
  return r.tag === undefined || r.tag === 'latest';
}

/** Parses `ENV A=1 B="x y"` / `ENV A value` / `ARG A=1` / `ARG A` into name-value pairs (value undefined when none). */
function parseAssignments(keyword: string, args: string): Array<{ name: string; value: string | undefined }> {
  const out: Array<{ name: string; value: string | undefined }> = [];
  if (keyword === 'ENV' && !/^[^\s=]+=/.test(args)) {
    const m = /^(\S+)\s+(.*)$/.exec(args);
    if (m) out.push({ name: m[1]!, value: m[2]! });
    return out;
  }
  const re = /([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|'[^']*'|\S*))?/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args))) {
    const v = m[2];
    out.push({ name: m[1]!, value: v === undefined ? undefined : v.replace(/^(["'])(.*)\1$/, '$2') });
  }
  return out;
}

function isLiteralValue(v: string | undefined): v is string {
  if (v === undefined) return false;
  const t = v.trim();
  return t !== '' && !/^\$\{?[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}?$/.test(t);
}

function dockerFinding(file: string, lines: readonly string[], ruleId: string, message: string, line: number, opts: { startColumn?: number; endColumn?: number; snippet?: string; fix?: Fix; identity?: string } = {}): Finding {
  const text = lines[line - 1] ?? '';
  return {
    ruleId,
    severity: RULE_SEVERITY.get(ruleId) ?? 'medium',
    message,
    file,
    range: lineRange(lines, line, opts.startColumn ?? 1, opts.endColumn),
    snippet: opts.snippet ?? normalizeLine(text),
    ...(opts.fix ? { fix: opts.fix } : {}),
    fingerprint: fingerprint(ruleId, file, opts.identity ?? normalizeLine(text)),
  };
}

/** Physical line (1-based) within an instruction whose text matches `re`, with the match column. */
function findLine(lines: readonly string[], ins: DockerInstruction, re: RegExp): { line: number; index: number; match: RegExpExecArray } | undefined {
  for (let l = ins.startLine; l <= ins.endLine; l++) {
    const m = re.exec(lines[l - 1] ?? '');
    if (m) return { line: l, index: m.index, match: m };
  }
  return undefined;
}

/** Dockerfile checks. `file` is workspace-relative. */
export function scanDockerfile(text: string, file: string): Finding[] {
  file = toWorkspacePath(file);
  const lines = text.split(/\r?\n/);
  const instructions = parseDockerfile(text);
  const findings: Finding[] = [];
  const stageNames = new Set<string>();
  let lastFrom: DockerInstruction | undefined;
  let lastUser: DockerInstruction | undefined;

  for (const ins of instructions) {
    switch (ins.keyword) {
      case 'FROM': {
        lastFrom = ins;
        lastUser = undefined; // USER does not carry over to a new stage
        const words = ins.args.split(/\s+/).filter((w) => !w.startsWith('--'));
        const image = words[0] ?? '';
        const asIdx = words.findIndex((w) => w.toUpperCase() === 'AS');
        const isStage = stageNames.has(image.toLowerCase());
        if (asIdx !== -1 && words[asIdx + 1]) stageNames.add(words[asIdx + 1]!.toLowerCase());
        if (!image || image.includes('$') || image.toLowerCase() === 'scratch' || isStage) break;
        if (isUnpinnedImage(image)) {
          const col = (lines[ins.startLine - 1] ?? '').indexOf(image);
          const tag = parseImageRef(image).tag;
          findings.push(dockerFinding(file, lines, 'docker/unpinned-image',
            `base image "${image}" is ${tag === 'latest' ? 'tagged :latest' : 'not tagged'}; pin it by digest (e.g. ${parseImageRef(image).name}:<version>@sha256:<digest>) for reproducible, reviewed builds`,
            ins.startLine, col >= 0 ? { startColumn: col + 1, endColumn: col + 1 + image.length } : {}));
        }
        break;
      }
      case 'USER':
        lastUser = ins;
        break;
      case 'ADD': {
        if (/--checksum=/.test(ins.args)) break;
        const m = findLine(lines, ins, /\b(https?|ftp):\/\/\S+/i);
        if (m) {
          findings.push(dockerFinding(file, lines, 'docker/add-from-url',
            'ADD downloads a remote file without verification; use ADD --checksum=sha256:<hash> or RUN curl with a checksum check',
            m.line, { startColumn: m.index + 1, endColumn: m.index + 1 + m.match[0].length }));
        }
        break;
      }
      case 'ENV':
      case 'ARG': {
        for (const a of parseAssignments(ins.keyword, ins.args)) {
          if (!isSecretName(a.name) || !isLiteralValue(a.value)) continue;
          const at = findLine(lines, ins, new RegExp(`(^|\\s)${a.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([=\\s])`));
          const line = at?.line ?? ins.startLine;
          const col = at ? at.index + at.match[1]!.length : 0;
          findings.push(dockerFinding(file, lines, 'docker/secret-in-env',
            `${ins.keyword} ${a.name} has a literal value baked into the image layers; pass it at run time (secret mount, orchestrator secret) instead`,
            line, { startColumn: col + 1, endColumn: col + 1 + a.name.length, snippet: `${ins.keyword} ${a.name}=${REDACTED}`, identity: `${ins.keyword} ${a.name}` }));
        }
        break;
      }
      case 'RUN': {
        const apt = /\bapt-get\s+(?:-\S+\s+)*install\b/;
        if (apt.test(ins.args) && !/--no-install-recommends/.test(ins.args)) {
          const m = findLine(lines, ins, apt);
          if (m) {
            const endCol = m.index + m.match[0].length + 1;
            findings.push(dockerFinding(file, lines, 'docker/apt-no-install-recommends',
              'apt-get install without --no-install-recommends installs recommended packages too (bigger image, larger attack surface)',
              m.line, {
                startColumn: m.index + 1, endColumn: endCol,
                fix: { description: 'add --no-install-recommends', edits: [{ file, range: { startLine: m.line, startColumn: endCol, endLine: m.line, endColumn: endCol }, newText: ' --no-install-recommends' }] },
              }));
          }
        }
        const pipe = /\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(\/usr\/bin\/env\s+|\/bin\/)?(ba|z|da|k)?sh\b/;
        if (pipe.test(ins.args)) {
          const m = findLine(lines, ins, /\b(curl|wget)\b/);
          findings.push(dockerFinding(file, lines, 'docker/curl-pipe-shell',
            'a script downloaded with curl/wget is piped into a shell without verification; download it, check its checksum or signature, then run it',
            m?.line ?? ins.startLine));
        }
        break;
      }
      default:
        break;
    }
  }

  if (lastFrom) {
    const userName = lastUser?.args.trim().split(/[:\s]/)[0]?.toLowerCase();
    if (!lastUser) {
      findings.push(dockerFinding(file, lines, 'docker/run-as-root',
        'the final stage has no USER instruction, so the container runs as root; add a non-root USER (e.g. USER 10001) after installing packages',
        lastFrom.startLine, { identity: 'no-user' }));
    } else if (userName === 'root' || userName === '0') {
      findings.push(dockerFinding(file, lines, 'docker/run-as-root',
        `the last USER of the final stage is ${userName}, so the container runs as root; switch to a non-root user`,
        lastUser.startLine));
    }
  }
  return sortFindings(findings);
}

// ---------------------------------------------------------------------------------------------
// Kubernetes YAML

export function isYamlFile(file: string): boolean {
  return /\.ya?ml$/i.test(file);
}

const WORKLOAD_KINDS = new Set(['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job', 'CronJob']);

function child(node: unknown, key: string): YamlNode | undefined {
  if (!isMap(node)) return undefined;
  return (node as YAMLMap).get(key, true) as YamlNode | undefined;
}

function childPath(node: unknown, keys: readonly string[]): YamlNode | undefined {
  let cur: unknown = node;
  for (const k of keys) {
    cur = child(cur, k);
    if (cur === undefined) return undefined;
  }
  return cur as YamlNode;
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

/** The pod spec of a workload document, by kind. */
function podSpecOf(kind: string, doc: unknown): YamlNode | undefined {
  if (kind === 'Pod') return child(doc, 'spec');
  if (kind === 'CronJob') return childPath(doc, ['spec', 'jobTemplate', 'spec', 'template', 'spec']);
  return childPath(doc, ['spec', 'template', 'spec']);
}

export interface ManifestScanResult {
  findings: Finding[];
  /** Kubernetes workload documents checked. */
  workloads: number;
  /** Documents that did not parse (skipped). */
  errors: string[];
}

/** Kubernetes checks over every document of a YAML file. Non-Kubernetes documents are ignored. */
export function scanKubernetesYaml(text: string, file: string): ManifestScanResult {
  file = toWorkspacePath(file);
  const lines = text.split(/\r?\n/);
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc });
  const result: ManifestScanResult = { findings: [], workloads: 0, errors: [] };
  if (!Array.isArray(docs)) return result;

  const rangeOf = (node: YamlNode | undefined, fallback?: YamlNode): Range => {
    const n = node?.range ? node : fallback;
    if (!n?.range) return { startLine: 1, startColumn: 1, endLine: 1, endColumn: 1 };
    const s = lc.linePos(n.range[0]);
    // For scalars end at the value; for collections mark the first line only.
    if (isScalar(n)) {
      const e = lc.linePos(n.range[1]);
      return { startLine: s.line, startColumn: s.col, endLine: e.line, endColumn: e.col };
    }
    return lineRange(lines, s.line, s.col);
  };

  docs.forEach((doc, di) => {
    if (doc.errors.length) {
      result.errors.push(`${file}: document ${di + 1}: ${doc.errors[0]!.message.split('\n')[0]}`);
      return;
    }
    const root = doc.contents;
    const kind = scalarValue(child(root, 'kind'));
    if (typeof kind !== 'string' || !WORKLOAD_KINDS.has(kind) || scalarValue(child(root, 'apiVersion')) === undefined) return;
    const spec = podSpecOf(kind, root);
    if (!isMap(spec)) return;
    result.workloads++;
    const name = String(scalarValue(childPath(root, ['metadata', 'name'])) ?? `document-${di + 1}`);
    const workload = `${kind}/${name}`;
    const push = (ruleId: string, message: string, range: Range, identity: string, extra: { snippet?: string; fix?: Fix } = {}) => {
      const snippet = extra.snippet ?? normalizeLine(lines[range.startLine - 1] ?? '');
      result.findings.push({
        ruleId, severity: RULE_SEVERITY.get(ruleId) ?? 'medium', message, file, range, snippet,
        ...(extra.fix ? { fix: extra.fix } : {}),
        fingerprint: fingerprint(ruleId, file, workload, identity),
      });
    };
    const replaceFix = (node: YamlNode, newText: string, description: string): Fix | undefined => {
      if (!isScalar(node) || !node.range) return undefined;
      const r = rangeOf(node);
      if (r.startLine !== r.endLine) return undefined;
      return { description, edits: [{ file, range: r, newText }] };
    };

    for (const [key, rule] of [['hostNetwork', 'k8s/host-network'], ['hostPID', 'k8s/host-pid'], ['hostIPC', 'k8s/host-ipc']] as const) {
      const n = child(spec, key);
      if (scalarValue(n) === true) push(rule, `${workload} sets ${key}: true and shares the host's namespace; remove it unless strictly required`, rangeOf(n), key);
    }

    const podSc = child(spec, 'securityContext');
    const podRunAsNonRoot = scalarValue(child(podSc, 'runAsNonRoot'));
    const podRunAsUserNode = child(podSc, 'runAsUser');
    const podRunAsUser = scalarValue(podRunAsUserNode);

    for (const listKey of ['initContainers', 'containers']) {
      const list = child(spec, listKey);
      if (!isSeq(list)) continue;
      for (const c of list.items) {
        if (!isMap(c)) continue;
        const cname = String(scalarValue(child(c, 'name')) ?? '?');
        const where = `${workload} container "${cname}"`;
        const cRange = rangeOf(child(c, 'name'), c as YamlNode);
        const sc = child(c, 'securityContext');

        const privileged = child(sc, 'privileged');
        if (scalarValue(privileged) === true) {
          const fix = replaceFix(privileged!, 'false', 'set privileged: false');
          push('k8s/privileged', `${where} runs privileged (full access to the host's devices and kernel); set privileged: false`, rangeOf(privileged), `${cname}/privileged`, fix ? { fix } : {});
        }

        const runAsUserNode = child(sc, 'runAsUser') ?? podRunAsUserNode;
        const runAsUser = child(sc, 'runAsUser') ? scalarValue(child(sc, 'runAsUser')) : podRunAsUser;
        const runAsNonRoot = child(sc, 'runAsNonRoot') ? scalarValue(child(sc, 'runAsNonRoot')) : podRunAsNonRoot;
        if (runAsUser === 0) {
          push('k8s/run-as-root', `${where} runs as root (runAsUser: 0); use a non-zero UID and runAsNonRoot: true`, rangeOf(runAsUserNode), `${cname}/runAsUser0`);
        } else if (runAsNonRoot !== true && !(typeof runAsUser === 'number' && runAsUser > 0)) {
          push('k8s/run-as-root', `${where} may run as root: set securityContext.runAsNonRoot: true (and a non-zero runAsUser)`, cRange, `${cname}/runAsNonRoot`);
        }

        const ape = child(sc, 'allowPrivilegeEscalation');
        if (scalarValue(ape) !== false) {
          const fix = ape && scalarValue(ape) === true ? replaceFix(ape, 'false', 'set allowPrivilegeEscalation: false') : undefined;
          push('k8s/allow-privilege-escalation', `${where} does not set securityContext.allowPrivilegeEscalation: false`, ape ? rangeOf(ape) : cRange, `${cname}/allowPrivilegeEscalation`, fix ? { fix } : {});
        }

        const imageNode = child(c, 'image');
        const image = scalarValue(imageNode);
        if (typeof image === 'string' && !image.includes('{{') && isUnpinnedImage(image)) {
          push('k8s/unpinned-image', `${where} uses image "${image}" which is ${parseImageRef(image).tag === 'latest' ? 'tagged :latest' : 'not tagged'}; pin it by digest (image@sha256:<digest>)`, rangeOf(imageNode), `${cname}/image/${image}`);
        }

        const limits = childPath(c, ['resources', 'limits']);
        const missing = ['cpu', 'memory'].filter((k) => child(limits, k) === undefined);
        if (missing.length) {
          push('k8s/missing-resource-limits', `${where} has no resources.limits.${missing.join(' / resources.limits.')}; one container can starve the node`, rangeOf(child(c, 'resources'), child(c, 'name') ?? (c as YamlNode)), `${cname}/limits`);
        }

        const env = child(c, 'env');
        if (isSeq(env)) {
          for (const e of env.items) {
            const ename = scalarValue(child(e, 'name'));
            const valueNode = child(e, 'value');
            const value = scalarValue(valueNode);
            if (typeof ename !== 'string' || !isSecretName(ename) || value === undefined || value === null || String(value).trim() === '') continue;
            const r = rangeOf(valueNode);
            push('k8s/secret-in-env', `${where} sets env ${ename} to a literal value; reference a Secret with valueFrom.secretKeyRef instead`, r, `${cname}/env/${ename}`, { snippet: `- name: ${ename} value: ${REDACTED}` });
          }
        }
      }
    }
  });
  sortFindings(result.findings);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Workspace

export interface IacScanResult {
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  dockerfiles: string[];
  manifests: string[];
  /** Parse errors (documents skipped). */
  errors: string[];
}

const MAX_IAC_BYTES = 2 * 1024 * 1024;

/** Runs the IaC checks on the Dockerfiles and YAML files among `files` (workspace-relative). */
export function scanIac(root: string, files: readonly string[]): IacScanResult {
  const out: IacScanResult = { findings: [], suppressed: [], dockerfiles: [], manifests: [], errors: [] };
  for (const f of files) {
    const file = toWorkspacePath(f);
    const docker = isDockerfile(file);
    if (!docker && !isYamlFile(file)) continue;
    if (/(^|\/)pnpm-lock\.yaml$/.test(file)) continue;
    let text: string;
    try {
      const abs = path.join(root, file);
      if (statSync(abs).size > MAX_IAC_BYTES) continue;
      text = readFileSync(abs, 'utf8');
    } catch {
      continue;
    }
    let found: Finding[];
    if (docker) {
      found = scanDockerfile(text, file);
      out.dockerfiles.push(file);
    } else {
      if (!/^\s*kind\s*:/m.test(text)) continue;
      const r = scanKubernetesYaml(text, file);
      out.errors.push(...r.errors);
      if (r.workloads === 0) continue;
      found = r.findings;
      out.manifests.push(file);
    }
    const sup = applySuppressions(found, new Map([[file, parseSuppressions(text)]]), RULE_FAMILY);
    out.findings.push(...sup.kept, ...sup.invalid);
    out.suppressed.push(...sup.suppressed);
  }
  sortFindings(out.findings);
  return out;
}

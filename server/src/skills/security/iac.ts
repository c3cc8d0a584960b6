/**
 * Infrastructure-as-code checks (security-ai `scan`, CORE tier): Dockerfiles here (line-based, with
 * `\` continuations), Kubernetes YAML in k8s.ts, Terraform in terraform.ts. Every finding has a rule
 * id, severity, message, range and fingerprint; a fix only where it is a safe text edit.
 */
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fingerprint, normalizeLine, sortFindings, toWorkspacePath, type Finding, type Fix, type RuleInfo, type Severity } from '../findings/finding';
import { applySuppressions, parseSuppressions } from '../findings/suppressions';
import { iacRule, isSecretName, isUnpinnedImage, lineRange, parseImageRef, REDACTED } from './iac-common';
import { isYamlFile, K8S_RULES, scanKubernetesYaml } from './k8s';
import { isTerraformFile, scanTerraform, TERRAFORM_RULES } from './terraform';

export { isSecretName, isUnpinnedImage, parseImageRef } from './iac-common';
export { isYamlFile, scanKubernetesYaml, WORKLOAD_KINDS, K8S_RULES, type ManifestScanResult } from './k8s';
export { isTerraformFile, scanTerraform, TERRAFORM_RULES } from './terraform';

export const DOCKER_RULES: readonly RuleInfo[] = [
  iacRule('docker/run-as-root', 'high', 'docker', 'The final stage runs as root: no USER instruction, or the last USER is root / 0'),
  iacRule('docker/unpinned-image', 'medium', 'docker', 'FROM uses :latest or no tag; pin the base image by digest (image@sha256:...)'),
  iacRule('docker/add-from-url', 'medium', 'docker', 'ADD fetches a remote URL without --checksum; download with a verified checksum instead'),
  iacRule('docker/secret-in-env', 'high', 'docker', 'ENV/ARG with a secret-like name (PASSWORD, SECRET, TOKEN, KEY; not *_FILE, *_PATH, *_KEY_SIZE, GPG_KEY) has a literal value baked into the image'),
  iacRule('docker/apt-no-install-recommends', 'low', 'docker', 'apt-get install without --no-install-recommends pulls in unneeded packages'),
  iacRule('docker/curl-pipe-shell', 'high', 'docker', 'A downloaded script is piped straight into a shell (curl|sh, wget|bash)'),
  iacRule('docker/sudo', 'medium', 'docker', 'RUN uses sudo (the build already runs as root; sudo in an image is an escalation path)'),
  iacRule('docker/expose-ssh', 'medium', 'docker', 'EXPOSE 22: an SSH server in a container (use kubectl exec / docker exec instead)'),
  iacRule('docker/verification-disabled', 'high', 'docker', 'TLS or signature verification turned off in RUN/ENV (curl -k, wget --no-check-certificate, strict-ssl false, pip --trusted-host, apt --allow-unauthenticated, GIT_SSL_NO_VERIFY, NODE_TLS_REJECT_UNAUTHORIZED=0)'),
];

export const IAC_RULES: readonly RuleInfo[] = [...DOCKER_RULES, ...K8S_RULES, ...TERRAFORM_RULES];

const RULE_SEVERITY = new Map<string, Severity>(IAC_RULES.map((r) => [r.id, r.severity]));
const RULE_FAMILY = new Map<string, string>(IAC_RULES.map((r) => [r.id, r.family ?? '']));

/** RUN (and ENV) text that turns off TLS or package signature verification, with what it does. */
const VERIFICATION_OFF: ReadonlyArray<[RegExp, string]> = [
  [/\bcurl\b[^|;&]*\s(?:-k|--insecure|-[a-zA-Z]*k[a-zA-Z]*)(?=\s|$)/, 'curl -k / --insecure skips TLS certificate checks'],
  [/\bwget\b[^|;&]*\s--no-check-certificate\b/, 'wget --no-check-certificate skips TLS certificate checks'],
  [/\b(?:npm|yarn|pnpm)\s+config\s+set\s+strict-ssl\s+false\b/, 'strict-ssl false lets the package manager accept any certificate'],
  [/\bpip3?\b[^|;&]*\s--trusted-host\b/, 'pip --trusted-host accepts that host without TLS verification'],
  [/\bapt(?:-get)?\b[^|;&]*\s--(?:allow-unauthenticated|force-yes|allow-insecure-repositories)\b/, 'apt --allow-unauthenticated installs unsigned packages'],
  [/\[\s*trusted=yes\s*\]/, 'an apt source marked [trusted=yes] is not signature-checked'],
  [/\b(?:yum|dnf|microdnf)\b[^|;&]*\s--nogpgcheck\b/, '--nogpgcheck installs unsigned packages'],
  [/\bapk\b[^|;&]*\s--allow-untrusted\b/, 'apk --allow-untrusted installs unsigned packages'],
  [/\bGIT_SSL_NO_VERIFY\s*=\s*(?:1|true)\b/i, 'GIT_SSL_NO_VERIFY turns off TLS verification for git'],
  [/\bgit\s+config\b[^|;&]*\bhttp\.sslVerify\s+false\b/, 'http.sslVerify false turns off TLS verification for git'],
  [/\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*["']?0\b/, 'NODE_TLS_REJECT_UNAUTHORIZED=0 turns off TLS verification in Node.js'],
  [/\bPYTHONHTTPSVERIFY\s*=\s*["']?0\b/, 'PYTHONHTTPSVERIFY=0 turns off TLS verification in Python'],
];

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
          const env = `${a.name}=${a.value ?? ''}`;
          const off = VERIFICATION_OFF.find(([re]) => re.test(env));
          if (off && isLiteralValue(a.value)) {
            findings.push(dockerFinding(file, lines, 'docker/verification-disabled', `${ins.keyword} ${a.name}: ${off[1]}; remove it and fix the certificate or key instead`, ins.startLine, { identity: `${ins.keyword} ${a.name}` }));
          }
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
      case 'EXPOSE': {
        const ports = ins.args.split(/\s+/).map((p) => p.split('/')[0]);
        if (ports.includes('22')) {
          const m = findLine(lines, ins, /\b22\b/);
          findings.push(dockerFinding(file, lines, 'docker/expose-ssh', 'EXPOSE 22 runs an SSH server in the container: another way in with its own keys to manage; use docker exec / kubectl exec',
            m?.line ?? ins.startLine, m ? { startColumn: m.index + 1, endColumn: m.index + 3 } : {}));
        }
        break;
      }
      case 'RUN': {
        // sudo as a command (line start, after && || ; | or a parenthesis), not a word inside a quoted argument.
        const sudo = findLine(lines, ins, /(^\s*(?:RUN\s+)?|(?:&&|\|\||[;|(])\s*)sudo\s/i);
        if (sudo) {
          const col = sudo.index + sudo.match[1]!.length;
          findings.push(dockerFinding(file, lines, 'docker/sudo', 'RUN uses sudo: build steps already run as the current USER (root before USER); installing sudo leaves an escalation path in the image',
            sudo.line, { startColumn: col + 1, endColumn: col + 5 }));
        }
        for (const [re, what] of VERIFICATION_OFF) {
          if (!re.test(ins.args)) continue;
          const m = findLine(lines, ins, re);
          findings.push(dockerFinding(file, lines, 'docker/verification-disabled', `${what}: a man in the middle can change what the image installs; fix the certificate or key instead`,
            m?.line ?? ins.startLine, m ? { startColumn: m.index + 1, endColumn: m.index + 1 + m.match[0].length, identity: `${normalizeLine(lines[m.line - 1] ?? '')}#${what}` } : { identity: what }));
        }
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
// Workspace

export interface IacScanResult {
  findings: Finding[];
  suppressed: Array<{ finding: Finding; reason: string }>;
  dockerfiles: string[];
  manifests: string[];
  /** Terraform files read (all judged together). */
  terraform: string[];
  /** Parse errors (documents skipped). */
  errors: string[];
}

const MAX_IAC_BYTES = 2 * 1024 * 1024;

/** Runs the IaC checks on the Dockerfiles and YAML files among `files` (workspace-relative). */
export function scanIac(root: string, files: readonly string[]): IacScanResult {
  const out: IacScanResult = { findings: [], suppressed: [], dockerfiles: [], manifests: [], terraform: [], errors: [] };
  const tf: Array<{ file: string; text: string }> = [];
  for (const f of files) {
    const file = toWorkspacePath(f);
    const docker = isDockerfile(file);
    if (isTerraformFile(file)) {
      const text = readSmall(root, file);
      if (text !== undefined) tf.push({ file, text });
      continue;
    }
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
  if (tf.length) {
    // Terraform files are judged together (a bucket and its encryption resource may be in two files).
    const found = scanTerraform(tf);
    const texts = new Map(tf.map((t) => [t.file, t.text]));
    for (const t of tf) {
      const own = found.filter((x) => x.file === t.file);
      const sup = applySuppressions(own, new Map([[t.file, parseSuppressions(texts.get(t.file)!)]]), RULE_FAMILY);
      out.findings.push(...sup.kept, ...sup.invalid);
      out.suppressed.push(...sup.suppressed);
    }
    out.terraform.push(...tf.map((t) => t.file));
  }
  sortFindings(out.findings);
  return out;
}

function readSmall(root: string, file: string): string | undefined {
  try {
    const abs = path.join(root, file);
    if (statSync(abs).size > MAX_IAC_BYTES) return undefined;
    return readFileSync(abs, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The baseline's Dockerfile rules (on security-ai's Dockerfile parser: continuations, stages) and
 * Compose rules (services of a parsed YAML file).
 */
import * as path from 'node:path';
import { isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';
import { isUnpinnedImage, parseImageRef } from '../security/iac-common';
import { parseDockerfile } from '../security/iac';
import { RUNTIME_SOCKETS } from '../security/k8s';
import { child, scalarValue } from '../security/k8s-yaml';
import type { FixValues } from './kubernetes';
import type { Violation } from './model';
import { BASELINE_BY_ID } from './rules';
import { keyPos, posOf, type ParsedYaml } from './yaml-file';

type Draft = Omit<Violation, 'severity' | 'fix' | 'file' | 'kind' | 'name' | 'source' | 'object' | 'container'> & { fix?: string; object?: string | null; name?: string | null };

function finish(file: string, d: Draft, kind: string | null): Violation {
  const rule = BASELINE_BY_ID.get(d.rule)!;
  return { ...d, severity: rule.severity, fix: d.fix ?? rule.fix, file, object: d.object ?? null, kind, name: d.name ?? null, container: null, source: null };
}

export function checkDockerfile(file: string, text: string, values: FixValues): Violation[] {
  const lines = text.split(/\r?\n/);
  const out: Violation[] = [];
  const stages = new Set<string>();
  let lastFrom: { line: number } | undefined;
  let lastUser: { line: number; user: string } | undefined;
  for (const ins of parseDockerfile(text)) {
    if (ins.keyword === 'USER') { lastUser = { line: ins.startLine, user: ins.args.trim().split(/[:\s]/)[0] ?? '' }; continue; }
    if (ins.keyword !== 'FROM') continue;
    lastFrom = { line: ins.startLine };
    lastUser = undefined; // USER does not carry over to a new stage
    const words = ins.args.split(/\s+/).filter((w) => !w.startsWith('--'));
    const image = words[0] ?? '';
    const asIdx = words.findIndex((w) => w.toUpperCase() === 'AS');
    const isStage = stages.has(image.toLowerCase());
    if (asIdx !== -1 && words[asIdx + 1]) stages.add(words[asIdx + 1]!.toLowerCase());
    if (!image || image.includes('$') || image.toLowerCase() === 'scratch' || isStage) continue;
    const lineText = lines[ins.startLine - 1] ?? '';
    const col = lineText.indexOf(image);
    const ref = parseImageRef(image);
    const digest = values.digests[image];
    const pin: Pick<Violation, 'fixable' | 'fixNote' | 'ops'> = digest && col >= 0
      ? { fixable: 'auto', ops: [{ kind: 'line-replace', line: ins.startLine, from: image, to: `${image}@${digest}` }] }
      : { fixable: 'needs-value', fixNote: `not auto-fixable: the digest of ${image} is not known (add it to policy.enforce.digests; a digest is never guessed)` };
    const at = { line: ins.startLine, column: col >= 0 ? col + 1 : 1 };
    if (isUnpinnedImage(image)) out.push(finish(file, { rule: 'docker.latest-base', ...at, message: `FROM ${image}: ${ref.tag === 'latest' ? 'tagged latest' : 'no tag'}`, ...pin }, 'Dockerfile'));
    if (!ref.digest) out.push(finish(file, { rule: 'docker.base-digest', ...at, message: `FROM ${image} is not pinned by digest`, ...pin }, 'Dockerfile'));
  }
  if (lastFrom) {
    const user = lastUser?.user.toLowerCase();
    if (!lastUser) {
      out.push(finish(file, { rule: 'docker.user-root', line: lastFrom.line, column: 1, message: 'the final stage has no USER: the container runs as root', fixable: 'manual', fixNote: 'the non-root user must exist in the image: a person chooses it' }, 'Dockerfile'));
    } else if (user === 'root' || user === '0') {
      out.push(finish(file, { rule: 'docker.user-root', line: lastUser.line, column: 1, message: `the final stage runs as USER ${user}`, fixable: 'manual', fixNote: 'the non-root user must exist in the image: a person chooses it' }, 'Dockerfile'));
    }
  }
  return out;
}

/** A Compose file by name (compose.yaml, docker-compose.prod.yml, ...). */
export function isComposeFileName(file: string): boolean {
  return /^(docker-)?compose([.-][\w.-]+)?\.ya?ml$/i.test(path.posix.basename(file));
}

/** A parsed YAML file that is a Compose file: by name, or a top-level `services` map and no Kubernetes kind. */
export function isCompose(p: ParsedYaml): boolean {
  const root = p.docs[0]?.contents;
  if (!isMap(child(root, 'services'))) return false;
  return isComposeFileName(p.file) || scalarValue(child(root, 'kind')) === undefined;
}

function volumeSource(v: unknown): { source: string; node: YamlNode } | undefined {
  if (isScalar(v) && typeof v.value === 'string') return { source: v.value.split(':')[0]!, node: v as YamlNode };
  if (isMap(v)) {
    const s = child(v, 'source');
    if (isScalar(s) && typeof s.value === 'string') return { source: s.value, node: s as YamlNode };
  }
  return undefined;
}

export function checkCompose(p: ParsedYaml, values: FixValues): { violations: Violation[]; services: number } {
  const out: Violation[] = [];
  const services = child(p.docs[0]?.contents, 'services');
  if (!isMap(services)) return { violations: out, services: 0 };
  let count = 0;
  for (const pair of services.items) {
    const name = String(isScalar(pair.key) ? pair.key.value : pair.key);
    const svc = pair.value;
    if (!isMap(svc)) continue;
    count++;
    const object = `service ${name}`;
    const base = ['services', name];
    const push = (d: Draft) => out.push(finish(p.file, { ...d, object, name }, 'ComposeService'));
    if (scalarValue(child(svc, 'privileged')) === true) {
      push({ rule: 'compose.privileged', ...keyPos(p, svc, 'privileged')!, message: `service ${name} runs privileged`, fixable: 'auto', ops: [{ kind: 'yaml-set', doc: 0, path: [...base, 'privileged'], value: false }], fix: 'set privileged: false' });
    }
    if (scalarValue(child(svc, 'network_mode')) === 'host') {
      push({ rule: 'compose.network-host', ...keyPos(p, svc, 'network_mode')!, message: `service ${name} uses the host's network (network_mode: host)`, fixable: 'auto', ops: [{ kind: 'yaml-delete', doc: 0, path: [...base, 'network_mode'] }], fix: 'remove network_mode: host' });
    }
    if (scalarValue(child(svc, 'pid')) === 'host') {
      push({ rule: 'compose.pid-host', ...keyPos(p, svc, 'pid')!, message: `service ${name} shares the host's PID namespace (pid: host)`, fixable: 'auto', ops: [{ kind: 'yaml-delete', doc: 0, path: [...base, 'pid'] }], fix: 'remove pid: host' });
    }
    const volumes = child(svc, 'volumes');
    if (isSeq(volumes)) {
      for (const v of volumes.items) {
        const src = volumeSource(v);
        if (src && RUNTIME_SOCKETS.test(src.source.replace(/\/+$/, ''))) {
          push({ rule: 'compose.docker-socket', ...(posOf(p, src.node) ?? { line: 1, column: 1 }), message: `service ${name} mounts the container runtime socket ${src.source}`, fixable: 'manual', fixNote: 'removing the mount changes what the service does: a person decides' });
        }
      }
    }
    const image = scalarValue(child(svc, 'image'));
    if (typeof image === 'string' && image.trim() !== '' && !image.includes('${') && isUnpinnedImage(image)) {
      const digest = values.digests[image];
      push({ rule: 'compose.image-latest', ...keyPos(p, svc, 'image')!, message: `service ${name} uses image "${image}", ${parseImageRef(image).tag === 'latest' ? 'tagged latest' : 'with no tag'}`,
        ...(digest
          ? { fixable: 'auto' as const, ops: [{ kind: 'yaml-set' as const, doc: 0, path: [...base, 'image'], value: `${image}@${digest}` }] }
          : { fixable: 'needs-value' as const, fixNote: `not auto-fixable: the digest of ${image} is not known (add it to policy.enforce.digests; a digest is never guessed)` }) });
    }
  }
  return { violations: out, services: count };
}

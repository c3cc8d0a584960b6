/**
 * The baseline's Kubernetes rules over the objects of a parsed YAML file: every kind with a pod
 * template (security/k8s-yaml.ts WORKLOAD_KINDS: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
 * Job, CronJob, DeploymentConfig, ...). Each violation names the line of the offending key and, when
 * the fix is mechanical, carries the edits (model.ts FixOp) enforce applies with the Document API.
 */
import { isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';
import { isUnpinnedImage, parseImageRef } from '../security/iac-common';
import { RUNTIME_SOCKETS } from '../security/k8s';
import { child, childPath, podTemplatePath, scalarValue, WORKLOAD_KINDS } from '../security/k8s-yaml';
import type { FixOp, Violation, YamlPath } from './model';
import { BASELINE_BY_ID } from './rules';
import { keyPos, posOf, type ParsedYaml, type YamlObject } from './yaml-file';

/** Values enforce may write that a rule cannot guess (from `policy.enforce` of the config). */
export interface FixValues {
  limits: { cpu?: string; memory?: string };
  /** Image reference (as written) -> sha256 digest. */
  digests: Record<string, string>;
}

const REPLICATED_KINDS = new Set(['Deployment', 'StatefulSet', 'DeploymentConfig']);

type Draft = Omit<Violation, 'severity' | 'fix' | 'file' | 'object' | 'kind' | 'name' | 'source'> & { fix?: string };

export function checkKubernetes(p: ParsedYaml, values: FixValues): { violations: Violation[]; workloads: number } {
  const violations: Violation[] = [];
  let workloads = 0;
  for (const o of p.objects) {
    if (!o.kind || !WORKLOAD_KINDS.has(o.kind) || scalarValue(child(o.root, 'apiVersion')) === undefined) continue;
    const tpl = podTemplatePath(o.kind);
    const spec = childPath(o.root, [...tpl, 'spec']);
    if (!isMap(spec)) continue;
    workloads++;
    const push = (d: Draft) => {
      const rule = BASELINE_BY_ID.get(d.rule)!;
      violations.push({ ...d, severity: rule.severity, fix: d.fix ?? rule.fix, file: p.file, object: `${o.kind}/${o.name ?? `document-${o.doc + 1}`}`, kind: o.kind, name: o.name, source: o.source });
    };
    const at = (node: YamlNode | undefined, fallback?: YamlNode) => posOf(p, node) ?? posOf(p, fallback) ?? { line: 1, column: 1 };
    const specPath: YamlPath = [...o.base, ...tpl, 'spec'];
    const kindNode = child(o.root, 'kind');

    for (const key of ['hostNetwork', 'hostPID', 'hostIPC']) {
      if (scalarValue(child(spec, key)) !== true) continue;
      push({ rule: 'k8s.host-namespaces', ...(keyPos(p, spec, key) ?? at(kindNode)), container: null,
        message: `${o.kind}/${o.name} sets ${key}: true and shares the node's namespace`, fixable: 'auto', ops: [{ kind: 'yaml-delete', doc: o.doc, path: [...specPath, key] }], fix: `remove ${key}` });
    }

    const volumes = child(spec, 'volumes');
    if (isSeq(volumes)) {
      for (const v of volumes.items) {
        const hostPath = child(v, 'hostPath');
        if (!hostPath) continue;
        const vname = String(scalarValue(child(v, 'name')) ?? '?');
        const hp = String(scalarValue(child(hostPath, 'path')) ?? '');
        const where = keyPos(p, hostPath, 'path') ?? keyPos(p, v, 'hostPath') ?? at(v as YamlNode);
        if (RUNTIME_SOCKETS.test(hp.replace(/\/+$/, ''))) {
          push({ rule: 'k8s.docker-socket', ...where, container: null, message: `volume "${vname}" mounts the container runtime socket ${hp}`, fixable: 'manual', fixNote: 'removing the mount changes what the workload does: a person decides' });
        } else {
          push({ rule: 'k8s.host-path', ...where, container: null, message: `volume "${vname}" mounts the host path ${hp || '(unset)'}`, fixable: 'manual', fixNote: 'the replacement volume (emptyDir, configMap, claim) depends on what the workload stores' });
        }
      }
    }

    if (REPLICATED_KINDS.has(o.kind)) {
      const oSpec = child(o.root, 'spec');
      const rNode = child(oSpec, 'replicas');
      const r = scalarValue(rNode);
      if (rNode === undefined || (typeof r === 'number' && r < 2)) {
        push({ rule: 'k8s.replicas', ...(rNode ? keyPos(p, oSpec, 'replicas')! : keyPos(p, o.root, 'spec') ?? at(kindNode)), container: null,
          message: rNode ? `${o.kind}/${o.name} asks for ${r} replica(s)` : `${o.kind}/${o.name} sets no replicas (Kubernetes runs 1)`,
          fixable: 'auto', ops: [{ kind: 'yaml-set', doc: o.doc, path: [...o.base, 'spec', 'replicas'], value: 2 }], fix: 'set spec.replicas: 2' });
      }
    }

    const podSc = child(spec, 'securityContext');
    const podNonRoot = scalarValue(child(podSc, 'runAsNonRoot'));
    const podUser = scalarValue(child(podSc, 'runAsUser'));

    for (const listKey of ['initContainers', 'containers']) {
      const list = child(spec, listKey);
      if (!isSeq(list)) continue;
      list.items.forEach((c, ci) => {
        if (!isMap(c)) return;
        const cname = String(scalarValue(child(c, 'name')) ?? `#${ci + 1}`);
        const cPath: YamlPath = [...specPath, listKey, ci];
        const scPath: YamlPath = [...cPath, 'securityContext'];
        const cPos = keyPos(p, c, 'name') ?? at(c as YamlNode);
        const sc = child(c, 'securityContext');
        const scPos = sc ? keyPos(p, c, 'securityContext')! : cPos;
        const where = `container "${cname}" of ${o.kind}/${o.name}`;
        const set = (key: string, value: unknown): FixOp => ({ kind: 'yaml-set', doc: o.doc, path: [...scPath, key], value });

        if (scalarValue(child(sc, 'privileged')) === true) {
          push({ rule: 'k8s.privileged', ...keyPos(p, sc, 'privileged')!, container: cname, message: `${where} runs privileged`, fixable: 'auto', ops: [set('privileged', false)], fix: 'set securityContext.privileged: false' });
        }
        const ape = child(sc, 'allowPrivilegeEscalation');
        if (scalarValue(ape) !== false) {
          push({ rule: 'k8s.allow-privilege-escalation', ...(ape ? keyPos(p, sc, 'allowPrivilegeEscalation')! : scPos), container: cname,
            message: `${where} does not set allowPrivilegeEscalation: false`, fixable: 'auto', ops: [set('allowPrivilegeEscalation', false)], fix: 'set securityContext.allowPrivilegeEscalation: false' });
        }
        const userNode = child(sc, 'runAsUser');
        const user = userNode ? scalarValue(userNode) : podUser;
        const nonRoot = child(sc, 'runAsNonRoot') ? scalarValue(child(sc, 'runAsNonRoot')) : podNonRoot;
        if (user === 0) {
          push({ rule: 'k8s.run-as-non-root', ...(userNode ? keyPos(p, sc, 'runAsUser')! : keyPos(p, podSc, 'runAsUser') ?? scPos), container: cname,
            message: `${where} runs as root (runAsUser: 0)`, fixable: 'manual', fixNote: 'runAsUser: 0 must become a UID the image supports: a person chooses it' });
        } else if (nonRoot !== true && !(typeof user === 'number' && user > 0)) {
          push({ rule: 'k8s.run-as-non-root', ...(child(sc, 'runAsNonRoot') ? keyPos(p, sc, 'runAsNonRoot')! : child(podSc, 'runAsNonRoot') ? keyPos(p, podSc, 'runAsNonRoot')! : scPos), container: cname,
            message: `${where} may run as root (no runAsNonRoot: true, no non-zero runAsUser)`, fixable: 'auto', ops: [set('runAsNonRoot', true)], fix: 'set securityContext.runAsNonRoot: true' });
        }
        const rorf = child(sc, 'readOnlyRootFilesystem');
        if (scalarValue(rorf) !== true) {
          push({ rule: 'k8s.read-only-root-filesystem', ...(rorf ? keyPos(p, sc, 'readOnlyRootFilesystem')! : scPos), container: cname,
            message: `${where} has a writable root filesystem`, fixable: 'auto', ops: [set('readOnlyRootFilesystem', true)], fix: 'set securityContext.readOnlyRootFilesystem: true' });
        }
        const caps = child(sc, 'capabilities');
        const drop = child(caps, 'drop');
        const dropsAll = isSeq(drop) && drop.items.some((d) => isScalar(d) && String(d.value).toUpperCase() === 'ALL');
        if (!dropsAll) {
          const op: FixOp = isSeq(drop) ? { kind: 'yaml-append', doc: o.doc, path: [...scPath, 'capabilities', 'drop'], value: 'ALL' } : { kind: 'yaml-set', doc: o.doc, path: [...scPath, 'capabilities', 'drop'], value: ['ALL'] };
          push({ rule: 'k8s.capabilities-drop-all', ...(drop ? keyPos(p, caps, 'drop')! : caps ? keyPos(p, sc, 'capabilities')! : scPos), container: cname,
            message: `${where} does not drop ALL capabilities`, fixable: 'auto', ops: [op], fix: 'set securityContext.capabilities.drop: [ALL]' });
        }

        const resources = child(c, 'resources');
        const limits = child(resources, 'limits');
        const missing = (['cpu', 'memory'] as const).filter((k) => child(limits, k) === undefined);
        if (missing.length) {
          const known = missing.filter((k) => values.limits[k] !== undefined);
          const pos = limits ? keyPos(p, resources, 'limits')! : resources ? keyPos(p, c, 'resources')! : cPos;
          const base = { rule: 'k8s.resource-limits', ...pos, container: cname, message: `${where} sets no resources.limits.${missing.join(' / resources.limits.')}` };
          if (known.length === missing.length) {
            push({ ...base, fixable: 'auto', ops: missing.map((k) => ({ kind: 'yaml-set' as const, doc: o.doc, path: [...cPath, 'resources', 'limits', k], value: values.limits[k]! })),
              fix: `set ${missing.map((k) => `resources.limits.${k}: ${values.limits[k]}`).join(', ')} (policy.enforce.limits)` });
          } else {
            push({ ...base, fixable: 'needs-value', fixNote: `needs a value: set policy.enforce.limits.${missing.filter((k) => values.limits[k] === undefined).join(' and ')} in the config, or write the limits (no number is invented)` });
          }
        }

        const imageNode = child(c, 'image');
        const image = scalarValue(imageNode);
        if (typeof image === 'string' && !image.includes('{{') && image.trim() !== '') {
          const ref = parseImageRef(image);
          const pos = keyPos(p, c, 'image')!;
          const digest = values.digests[image];
          const pin: Pick<Violation, 'fixable' | 'fixNote' | 'ops'> = digest
            ? { fixable: 'auto', ops: [{ kind: 'yaml-set', doc: o.doc, path: [...cPath, 'image'], value: `${image}@${digest}` }] }
            : { fixable: 'needs-value', fixNote: `not auto-fixable: the digest of ${image} is not known (add it to policy.enforce.digests; a digest is never guessed)` };
          if (isUnpinnedImage(image)) {
            push({ rule: 'k8s.image-latest', ...pos, container: cname, message: `${where} uses image "${image}", ${ref.tag === 'latest' ? 'tagged latest' : 'with no tag'}`, ...pin });
          }
          if (!ref.digest) {
            push({ rule: 'k8s.image-digest', ...pos, container: cname, message: `${where} uses image "${image}", not pinned by digest`, ...pin });
          }
        }
      });
    }
  }
  return { violations, workloads };
}

/** Whether an object is a Kubernetes object policy-ai judges (kind and apiVersion present). */
export function isKubernetesObject(o: YamlObject): boolean {
  return o.kind !== null && scalarValue(child(o.root, 'apiVersion')) !== undefined;
}

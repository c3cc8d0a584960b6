/**
 * Kubernetes manifest checks: every document of a YAML file is parsed with `yaml` (node ranges kept
 * for line numbers). Workloads of every kind that carries a pod template (Pod, Deployment, StatefulSet,
 * DaemonSet, ReplicaSet, ReplicationController, Job, CronJob's jobTemplate, PodTemplate, OpenShift's
 * DeploymentConfig, Argo Rollouts) get the pod-spec and securityContext checks the Pod Security
 * Standards "restricted" profile asks for; Role and ClusterRole get the RBAC wildcard check.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';
import { fingerprint, normalizeLine, sortFindings, toWorkspacePath, type Finding, type Fix, type Range, type RuleInfo, type Severity } from '../findings/finding';
import { iacRule, isSecretName, isUnpinnedImage, lineRange, parseImageRef, REDACTED } from './iac-common';
import { child, childPath, k8sObjects, podAnnotationsOf, podSpecOf, scalarValue, WORKLOAD_KINDS } from './k8s-yaml';

export { WORKLOAD_KINDS } from './k8s-yaml';

export const K8S_RULES: readonly RuleInfo[] = [
  iacRule('k8s/privileged', 'critical', 'kubernetes', 'Container runs privileged (securityContext.privileged: true)'),
  iacRule('k8s/run-as-root', 'high', 'kubernetes', 'Container may run as root: runAsUser 0, or neither runAsNonRoot: true nor a non-zero runAsUser'),
  iacRule('k8s/allow-privilege-escalation', 'medium', 'kubernetes', 'securityContext.allowPrivilegeEscalation is not set to false'),
  iacRule('k8s/unpinned-image', 'medium', 'kubernetes', 'Container image uses :latest or no tag; pin it by digest'),
  iacRule('k8s/missing-resource-limits', 'medium', 'kubernetes', 'Container has no resources.limits for cpu and/or memory'),
  iacRule('k8s/secret-in-env', 'high', 'kubernetes', 'env value with a secret-like name is a literal instead of valueFrom.secretKeyRef'),
  iacRule('k8s/host-network', 'high', 'kubernetes', 'Pod shares the host network namespace (hostNetwork: true)'),
  iacRule('k8s/host-pid', 'high', 'kubernetes', 'Pod shares the host PID namespace (hostPID: true)'),
  iacRule('k8s/host-ipc', 'high', 'kubernetes', 'Pod shares the host IPC namespace (hostIPC: true)'),
  iacRule('k8s/host-path', 'high', 'kubernetes', 'Pod mounts a hostPath volume (host files inside the container)'),
  iacRule('k8s/container-runtime-socket', 'critical', 'kubernetes', 'Pod mounts the container runtime socket (docker.sock, containerd.sock, crio.sock): root on the node'),
  iacRule('k8s/added-capabilities', 'high', 'kubernetes', 'Container adds Linux capabilities beyond NET_BIND_SERVICE (SYS_ADMIN, NET_ADMIN, ALL...)'),
  iacRule('k8s/capabilities-not-dropped', 'medium', 'kubernetes', 'Container does not drop ALL capabilities (securityContext.capabilities.drop: [ALL])'),
  iacRule('k8s/read-only-root-filesystem', 'low', 'kubernetes', 'Container root filesystem is writable (readOnlyRootFilesystem is not true)'),
  iacRule('k8s/seccomp-profile', 'medium', 'kubernetes', 'No seccomp profile (RuntimeDefault or Localhost) for the container, or Unconfined'),
  iacRule('k8s/automount-service-account-token', 'low', 'kubernetes', 'Pod mounts its service-account token automatically (automountServiceAccountToken is not false)'),
  iacRule('k8s/rbac-wildcard', 'high', 'kubernetes', 'Role or ClusterRole grants * on verbs, resources or API groups'),
];

const RULE_SEVERITY = new Map<string, Severity>(K8S_RULES.map((r) => [r.id, r.severity]));

const RBAC_KINDS = new Set(['Role', 'ClusterRole']);

/** Capabilities a web server may add without weakening the container (binding a port below 1024). */
const SAFE_ADDED_CAPABILITIES = new Set(['NET_BIND_SERVICE']);
export const RUNTIME_SOCKETS = /(^|\/)(docker|containerd|crio|cri-dockerd|podman)\.sock$|^\/var\/run\/docker$|^\/run\/containerd\/?$/;

export function isYamlFile(file: string): boolean {
  return /\.ya?ml$/i.test(file);
}

export interface ManifestScanResult {
  findings: Finding[];
  /** Kubernetes workload (and RBAC) documents checked. */
  workloads: number;
  /** Documents that did not parse (skipped). */
  errors: string[];
}

function strings(node: unknown): Array<{ value: string; node: YamlNode }> {
  if (!isSeq(node)) return [];
  return node.items.filter((i) => isScalar(i) && typeof i.value === 'string').map((i) => ({ value: String((i as { value: unknown }).value), node: i as YamlNode }));
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

  // Each document, and each item of a `kind: List` (what `kubectl get -o yaml` writes).
  const { objects: resources, errors } = k8sObjects(docs);
  for (const e of errors) result.errors.push(`${file}: document ${e.di + 1}: ${e.message}`);

  resources.forEach(({ root, di }) => {
    const kind = scalarValue(child(root, 'kind'));
    if (typeof kind !== 'string' || scalarValue(child(root, 'apiVersion')) === undefined) return;
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

    if (RBAC_KINDS.has(kind)) {
      result.workloads++;
      const rules = child(root, 'rules');
      if (!isSeq(rules)) return;
      rules.items.forEach((r, ri) => {
        for (const field of ['verbs', 'resources', 'apiGroups']) {
          const star = strings(child(r, field)).find((s) => s.value === '*');
          if (star) push('k8s/rbac-wildcard', `${workload} rule ${ri + 1} grants "*" in ${field}; list the ${field} the subject needs`, rangeOf(star.node), `rule${ri}/${field}`);
        }
      });
      return;
    }
    if (!WORKLOAD_KINDS.has(kind)) return;
    const spec = podSpecOf(kind, root);
    if (!isMap(spec)) return;
    result.workloads++;
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

    const automount = child(spec, 'automountServiceAccountToken');
    if (scalarValue(automount) !== false) {
      push('k8s/automount-service-account-token', `${workload} gets its service-account token mounted; set automountServiceAccountToken: false unless it calls the Kubernetes API`,
        automount ? rangeOf(automount) : rangeOf(child(root, 'kind')), 'automount');
    }

    const volumes = child(spec, 'volumes');
    if (isSeq(volumes)) {
      for (const v of volumes.items) {
        const hostPath = child(v, 'hostPath');
        if (!hostPath) continue;
        const vname = String(scalarValue(child(v, 'name')) ?? '?');
        const p = String(scalarValue(child(hostPath, 'path')) ?? '');
        if (RUNTIME_SOCKETS.test(p.replace(/\/+$/, ''))) {
          push('k8s/container-runtime-socket', `${workload} volume "${vname}" mounts the container runtime socket ${p}: anyone in the pod controls every container on the node`, rangeOf(child(hostPath, 'path'), hostPath), `volume/${vname}/socket`);
        } else {
          push('k8s/host-path', `${workload} volume "${vname}" mounts the host path ${p || '(unset)'}; use an emptyDir, configMap or persistent volume instead`, rangeOf(child(hostPath, 'path'), hostPath), `volume/${vname}`);
        }
      }
    }

    const podSc = child(spec, 'securityContext');
    const podRunAsNonRoot = scalarValue(child(podSc, 'runAsNonRoot'));
    const podRunAsUserNode = child(podSc, 'runAsUser');
    const podRunAsUser = scalarValue(podRunAsUserNode);
    const podSeccomp = childPath(podSc, ['seccompProfile', 'type']);
    const annotations = podAnnotationsOf(kind, root);
    const legacySeccomp = scalarValue(child(annotations, 'seccomp.security.alpha.kubernetes.io/pod'));

    for (const listKey of ['initContainers', 'containers', 'ephemeralContainers']) {
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

        const rorf = child(sc, 'readOnlyRootFilesystem');
        if (scalarValue(rorf) !== true) {
          const fix = rorf && scalarValue(rorf) === false ? replaceFix(rorf, 'true', 'set readOnlyRootFilesystem: true') : undefined;
          push('k8s/read-only-root-filesystem', `${where} can write to its root filesystem; set securityContext.readOnlyRootFilesystem: true (mount an emptyDir where it must write)`,
            rorf ? rangeOf(rorf) : cRange, `${cname}/readOnlyRootFilesystem`, fix ? { fix } : {});
        }

        const caps = child(sc, 'capabilities');
        for (const add of strings(child(caps, 'add'))) {
          const cap = add.value.toUpperCase().replace(/^CAP_/, '');
          if (!SAFE_ADDED_CAPABILITIES.has(cap)) push('k8s/added-capabilities', `${where} adds the ${cap} capability; drop it (only NET_BIND_SERVICE is harmless)`, rangeOf(add.node), `${cname}/cap-add/${cap}`);
        }
        if (!strings(child(caps, 'drop')).some((d) => d.value.toUpperCase() === 'ALL')) {
          push('k8s/capabilities-not-dropped', `${where} keeps the runtime's default capabilities; set securityContext.capabilities.drop: ["ALL"]`,
            caps ? rangeOf(caps) : cRange, `${cname}/cap-drop`);
        }

        const seccompNode = childPath(sc, ['seccompProfile', 'type']) ?? podSeccomp;
        const seccomp = scalarValue(seccompNode);
        const legacyOk = typeof legacySeccomp === 'string' && /^(runtime\/default|docker\/default|localhost\/)/.test(legacySeccomp);
        if (seccomp === 'Unconfined') {
          push('k8s/seccomp-profile', `${where} runs with seccompProfile Unconfined (every system call allowed); use RuntimeDefault`, rangeOf(seccompNode), `${cname}/seccomp`);
        } else if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost' && !legacyOk) {
          push('k8s/seccomp-profile', `${where} has no seccomp profile; set securityContext.seccompProfile.type: RuntimeDefault (pod or container)`, cRange, `${cname}/seccomp`);
        }

        const imageNode = child(c, 'image');
        const image = scalarValue(imageNode);
        if (typeof image === 'string' && !image.includes('{{') && isUnpinnedImage(image)) {
          push('k8s/unpinned-image', `${where} uses image "${image}" which is ${parseImageRef(image).tag === 'latest' ? 'tagged :latest' : 'not tagged'}; pin it by digest (image@sha256:<digest>)`, rangeOf(imageNode), `${cname}/image/${image}`);
        }

        if (listKey !== 'ephemeralContainers') {
          const limits = childPath(c, ['resources', 'limits']);
          const missing = ['cpu', 'memory'].filter((k) => child(limits, k) === undefined);
          if (missing.length) {
            push('k8s/missing-resource-limits', `${where} has no resources.limits.${missing.join(' / resources.limits.')}; one container can starve the node`, rangeOf(child(c, 'resources'), child(c, 'name') ?? (c as YamlNode)), `${cname}/limits`);
          }
        }

        const env = child(c, 'env');
        if (isSeq(env)) {
          for (const e of env.items) {
            const ename = scalarValue(child(e, 'name'));
            const valueNode = child(e, 'value');
            const value = scalarValue(valueNode);
            if (typeof ename !== 'string' || !isSecretName(ename) || value === undefined || value === null || String(value).trim() === '') continue;
            if (/^\$\(?[A-Za-z_][A-Za-z0-9_]*\)?$/.test(String(value).trim())) continue; // $(OTHER_VAR) expansion
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

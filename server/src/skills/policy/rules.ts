/**
 * policy-ai's built-in baseline: one table, one row per rule, with what it checks, why it matters and
 * how to fix it. The checks themselves live in baseline.ts (Kubernetes), docker-compose.ts (Dockerfiles
 * and Compose files); the rows here are what the report and docs/api.md show.
 */

export type PolicySeverity = 'low' | 'medium' | 'high' | 'critical';
export const SEVERITY_RANK: Readonly<Record<PolicySeverity, number>> = { low: 1, medium: 2, high: 3, critical: 4 };

/** What `enforce` can do about a violation of the rule. */
export type AutoFix =
  /** A mechanical edit, always. */
  | 'yes'
  /** Only with a value from the config (`policy.enforce.limits` / `policy.enforce.digests`); never invented. */
  | 'with-config-value'
  /** Needs a person (removing a mount or choosing a user breaks what the workload does). */
  | 'no';

export type PolicyTarget = 'kubernetes' | 'dockerfile' | 'compose';

export interface BaselineRule {
  id: string;
  severity: PolicySeverity;
  target: PolicyTarget;
  /** What the rule checks. */
  checks: string;
  why: string;
  fix: string;
  autofix: AutoFix;
}

export const BASELINE_RULES: readonly BaselineRule[] = [
  { id: 'k8s.privileged', severity: 'critical', target: 'kubernetes', autofix: 'yes',
    checks: 'No container sets securityContext.privileged: true',
    why: 'A privileged container has every device and kernel capability of the node: a compromise of the container is a compromise of the node',
    fix: 'set securityContext.privileged: false (grant the one capability the workload needs instead)' },
  { id: 'k8s.host-namespaces', severity: 'high', target: 'kubernetes', autofix: 'yes',
    checks: 'The pod does not set hostNetwork, hostPID or hostIPC to true',
    why: 'Sharing the host network, process or IPC namespace lets the pod see and reach the node\'s traffic, processes and shared memory',
    fix: 'remove hostNetwork / hostPID / hostIPC (use a Service or a hostPort where a port must be reachable)' },
  { id: 'k8s.host-path', severity: 'high', target: 'kubernetes', autofix: 'no',
    checks: 'No volume is a hostPath',
    why: 'A hostPath volume puts the node\'s files inside the container: secrets of other pods, kubelet credentials, writable system paths',
    fix: 'use an emptyDir, a configMap / secret, or a persistent volume claim' },
  { id: 'k8s.docker-socket', severity: 'critical', target: 'kubernetes', autofix: 'no',
    checks: 'No hostPath volume mounts a container runtime socket (docker.sock, containerd.sock, crio.sock)',
    why: 'Whoever reaches the runtime socket starts privileged containers on the node: root on the node',
    fix: 'remove the volume; build images with a rootless builder (kaniko, buildkit rootless) instead of the node\'s daemon' },
  { id: 'k8s.resource-limits', severity: 'medium', target: 'kubernetes', autofix: 'with-config-value',
    checks: 'Every container (and init container) sets resources.limits.cpu and resources.limits.memory',
    why: 'Without limits one container can take the node\'s CPU and memory and starve or evict its neighbours',
    fix: 'set resources.limits.cpu and resources.limits.memory (enforce writes policy.enforce.limits when configured; it never invents numbers)' },
  { id: 'k8s.read-only-root-filesystem', severity: 'medium', target: 'kubernetes', autofix: 'yes',
    checks: 'Every container sets securityContext.readOnlyRootFilesystem: true',
    why: 'A writable root filesystem lets an intruder drop tools and change binaries that survive until the container restarts',
    fix: 'set securityContext.readOnlyRootFilesystem: true and mount an emptyDir where the process must write' },
  { id: 'k8s.capabilities-drop-all', severity: 'medium', target: 'kubernetes', autofix: 'yes',
    checks: 'Every container drops ALL Linux capabilities (securityContext.capabilities.drop contains ALL)',
    why: 'The runtime\'s default capabilities (NET_RAW, CHOWN, SETUID, ...) are more than most workloads use and help an escalation',
    fix: 'set securityContext.capabilities.drop: [ALL] and add back only what is needed (NET_BIND_SERVICE)' },
  { id: 'k8s.allow-privilege-escalation', severity: 'medium', target: 'kubernetes', autofix: 'yes',
    checks: 'Every container sets securityContext.allowPrivilegeEscalation: false',
    why: 'Unless it is false, a process can gain more privileges than its parent (setuid binaries, file capabilities)',
    fix: 'set securityContext.allowPrivilegeEscalation: false' },
  { id: 'k8s.run-as-non-root', severity: 'high', target: 'kubernetes', autofix: 'yes',
    checks: 'Every container runs as non-root: runAsNonRoot: true (container or pod) or a non-zero runAsUser, and never runAsUser: 0',
    why: 'Root in a container is root on the node as soon as anything else (a mount, a kernel bug, a capability) gives way',
    fix: 'set securityContext.runAsNonRoot: true (and a non-zero runAsUser the image supports); runAsUser: 0 needs a person to choose the UID' },
  { id: 'k8s.image-digest', severity: 'medium', target: 'kubernetes', autofix: 'with-config-value',
    checks: 'Every container image is pinned by digest (image@sha256:...)',
    why: 'A tag can be moved to other content: the image that runs is not the image that was reviewed',
    fix: 'pin the image by digest (name:tag@sha256:<digest>); enforce pins it when policy.enforce.digests knows the digest, never guessing one' },
  { id: 'k8s.image-latest', severity: 'high', target: 'kubernetes', autofix: 'with-config-value',
    checks: 'No container image uses the latest tag or no tag (unless pinned by digest)',
    why: '`latest` (or no tag) is whatever was pushed last: deploys are not reproducible and a rollback does not roll back',
    fix: 'use a version tag, and pin it by digest' },
  { id: 'k8s.replicas', severity: 'medium', target: 'kubernetes', autofix: 'yes',
    checks: 'Deployments, StatefulSets and DeploymentConfigs ask for at least 2 replicas (an absent replicas is 1)',
    why: 'One replica means downtime at every rollout, node drain or crash',
    fix: 'set spec.replicas: 2 or more (or let a HorizontalPodAutoscaler with minReplicas >= 2 manage it and waive the rule)' },
  { id: 'docker.latest-base', severity: 'high', target: 'dockerfile', autofix: 'with-config-value',
    checks: 'No FROM uses the latest tag or no tag (unless pinned by digest)',
    why: 'The base image changes under the build: two builds of one commit differ and a fix can silently regress',
    fix: 'FROM name:<version>@sha256:<digest>' },
  { id: 'docker.base-digest', severity: 'medium', target: 'dockerfile', autofix: 'with-config-value',
    checks: 'Every FROM image is pinned by digest',
    why: 'A tag can be moved to other content: the base that is built on is not the one that was reviewed',
    fix: 'append @sha256:<digest> to the FROM image (enforce does when policy.enforce.digests knows it)' },
  { id: 'docker.user-root', severity: 'high', target: 'dockerfile', autofix: 'no',
    checks: 'The final stage sets a USER that is not root (or 0)',
    why: 'Without USER the container runs as root',
    fix: 'add USER <non-root uid> after the packages are installed (the user must exist in the image: a person chooses it)' },
  { id: 'compose.privileged', severity: 'critical', target: 'compose', autofix: 'yes',
    checks: 'No service sets privileged: true',
    why: 'A privileged container has every device and capability of the host',
    fix: 'set privileged: false (add the one capability needed with cap_add instead)' },
  { id: 'compose.docker-socket', severity: 'critical', target: 'compose', autofix: 'no',
    checks: 'No service mounts the container runtime socket (/var/run/docker.sock, containerd.sock, ...)',
    why: 'Whoever reaches the socket controls every container of the host: root on the host',
    fix: 'remove the volume (use a socket proxy that allows only the calls needed, if the service must see containers)' },
  { id: 'compose.network-host', severity: 'high', target: 'compose', autofix: 'yes',
    checks: 'No service sets network_mode: host',
    why: 'The service shares the host\'s network stack: every host port and interface, no isolation',
    fix: 'remove network_mode: host and publish the ports needed with ports:' },
  { id: 'compose.pid-host', severity: 'high', target: 'compose', autofix: 'yes',
    checks: 'No service sets pid: host',
    why: 'The service sees and can signal every process of the host',
    fix: 'remove pid: host' },
  { id: 'compose.image-latest', severity: 'high', target: 'compose', autofix: 'with-config-value',
    checks: 'No service image uses the latest tag or no tag (unless pinned by digest)',
    why: '`latest` is whatever was pushed last: two hosts run different code',
    fix: 'use a version tag, pinned by digest' },
];

export const BASELINE_BY_ID: ReadonlyMap<string, BaselineRule> = new Map(BASELINE_RULES.map((r) => [r.id, r]));

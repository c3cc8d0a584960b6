/**
 * Reading Kubernetes objects out of YAML, shared by security-ai's manifest checks (k8s.ts) and
 * policy-ai (skills/policy): node lookups that keep `yaml`'s ranges (for line numbers), where each
 * workload kind keeps its pod template, and the objects of a multi-document file with `kind: List`
 * items expanded (what `kubectl get -o yaml` writes).
 */
import { isMap, isScalar, isSeq, type Document, type Node as YamlNode, type YAMLMap } from 'yaml';

/** Kinds that carry a pod template (OpenShift's DeploymentConfig and Argo's Rollout included). */
export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job', 'CronJob',
  'PodTemplate', 'DeploymentConfig', 'Rollout']);

export function child(node: unknown, key: string): YamlNode | undefined {
  if (!isMap(node)) return undefined;
  return (node as YAMLMap).get(key, true) as YamlNode | undefined;
}

export function childPath(node: unknown, keys: readonly string[]): YamlNode | undefined {
  let cur: unknown = node;
  for (const k of keys) {
    cur = child(cur, k);
    if (cur === undefined) return undefined;
  }
  return cur as YamlNode;
}

export function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

/** Where each workload kind keeps its pod template, from the object's root. */
export function podTemplatePath(kind: string): readonly string[] {
  if (kind === 'Pod') return [];
  if (kind === 'PodTemplate') return ['template'];
  if (kind === 'CronJob') return ['spec', 'jobTemplate', 'spec', 'template'];
  return ['spec', 'template'];
}

/** The pod spec of a workload object, by kind. */
export function podSpecOf(kind: string, doc: unknown): YamlNode | undefined {
  return childPath(doc, [...podTemplatePath(kind), 'spec']);
}

/** The pod template's annotations (legacy seccomp annotations live there). */
export function podAnnotationsOf(kind: string, doc: unknown): YamlNode | undefined {
  return childPath(doc, [...podTemplatePath(kind), 'metadata', 'annotations']);
}

export interface K8sObject {
  /** The object's root map. */
  root: unknown;
  /** Index of its document in the file, from 0. */
  di: number;
  /** Index in the document's `kind: List` items, when it came from one. */
  item?: number;
}

/**
 * The objects of parsed documents: each document, or each item of a `kind: List`. Documents with
 * parse errors are skipped and described in `errors` (index and the parser's first message).
 */
export function k8sObjects(docs: readonly Document.Parsed[]): { objects: K8sObject[]; errors: Array<{ di: number; message: string; offset: number }> } {
  const objects: K8sObject[] = [];
  const errors: Array<{ di: number; message: string; offset: number }> = [];
  docs.forEach((doc, di) => {
    if (doc.errors.length) {
      errors.push({ di, message: doc.errors[0]!.message.split('\n')[0]!, offset: doc.errors[0]!.pos[0] });
      return;
    }
    const items = scalarValue(child(doc.contents, 'kind')) === 'List' ? child(doc.contents, 'items') : undefined;
    if (isSeq(items)) items.items.forEach((it, item) => objects.push({ root: it, di, item }));
    else objects.push({ root: doc.contents, di });
  });
  return { objects, errors };
}

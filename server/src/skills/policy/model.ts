/** The shapes policy-ai's checks produce: violations with where they are, and the edits that fix them. */
import type { PolicySeverity } from './rules';

/** A path inside one YAML document (keys and sequence indexes), as `yaml`'s setIn/deleteIn take it. */
export type YamlPath = ReadonlyArray<string | number>;

/** One edit that fixes (part of) a violation. Data, so that research can plan it and generate apply it. */
export type FixOp =
  | { kind: 'yaml-set'; doc: number; path: YamlPath; value: unknown }
  | { kind: 'yaml-delete'; doc: number; path: YamlPath }
  /** Appends a scalar to a sequence (capabilities.drop gets ALL beside what it lists). */
  | { kind: 'yaml-append'; doc: number; path: YamlPath; value: string }
  /** Replaces `from` by `to` on one line (1-based) of a line-based file (a Dockerfile FROM). */
  | { kind: 'line-replace'; line: number; from: string; to: string };

export type FixState = 'auto' | 'needs-value' | 'manual';

export interface Violation {
  rule: string;
  severity: PolicySeverity;
  /** Workspace-relative path. */
  file: string;
  /** 1-based line of the offending key (or of the nearest enclosing one when the key is missing). */
  line: number;
  column: number;
  /** `Kind/name` (Kubernetes), `service <name>` (Compose), or null (a Dockerfile). */
  object: string | null;
  kind: string | null;
  name: string | null;
  container: string | null;
  /** Helm-rendered output: the chart template the object came from (`# Source:` comment). */
  source: string | null;
  message: string;
  fix: string;
  /** auto: enforce fixes it; needs-value: it would with a configured value; manual: a person must. */
  fixable: FixState;
  /** Why it is not auto-fixable (needs-value, manual). */
  fixNote?: string;
  /** The edits that fix it (auto only). */
  ops?: FixOp[];
}

export interface Waived extends Violation {
  waiver: { reason: string; file?: string; object?: string };
}

/** A file that could not be judged: YAML that does not parse (file and line), an unrendered template. */
export interface FileProblem {
  file: string;
  line: number | null;
  message: string;
}

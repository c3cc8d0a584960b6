/**
 * A YAML file as policy-ai reads it: every document parsed once with positions kept (`yaml`'s
 * LineCounter), the objects of each document (List items expanded, security/k8s-yaml.ts), the path
 * of each object inside its document (for the fix edits) and the Helm `# Source:` template it was
 * rendered from.
 */
import { isMap, isScalar, LineCounter, parseAllDocuments, type Document, type Node as YamlNode, type Pair } from 'yaml';
import { k8sObjects, scalarValue, child, childPath } from '../security/k8s-yaml';
import type { FileProblem, YamlPath } from './model';

export interface YamlObject {
  root: unknown;
  /** Document index in the file. */
  doc: number;
  /** Path of the object's root inside its document ([] or ['items', i]). */
  base: YamlPath;
  kind: string | null;
  name: string | null;
  /** The chart template of Helm-rendered output, when a `# Source:` comment says it. */
  source: string | null;
}

export interface ParsedYaml {
  file: string;
  text: string;
  docs: Document.Parsed[];
  lc: LineCounter;
  objects: YamlObject[];
  problems: FileProblem[];
}

const SOURCE_COMMENT = /(?:^|\n)\s*Source:\s*(\S+)/;

function helmSource(doc: Document.Parsed): string | null {
  const comments = [doc.commentBefore, (doc.contents as { commentBefore?: string | null } | null)?.commentBefore].filter((c): c is string => typeof c === 'string');
  for (const c of comments) {
    const m = SOURCE_COMMENT.exec(c);
    if (m) return m[1]!;
  }
  return null;
}

export function parseYamlFile(file: string, text: string): ParsedYaml {
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false });
  const out: ParsedYaml = { file, text, docs: Array.isArray(docs) ? docs : [], lc, objects: [], problems: [] };
  if (!Array.isArray(docs)) {
    // An empty stream parses to an EmptyStream: nothing to judge.
    return out;
  }
  const templated = text.includes('{{');
  if (templated && /(^|\/)templates\//.test(file)) {
    // A chart's template is not YAML until rendered (`{{ ... }}` may even parse, as a flow map): judged from helm template's output.
    out.problems.push({ file, line: null, message: 'an unrendered Helm chart template: not judged; check the output of `helm template` instead' });
    return out;
  }
  const { objects, errors } = k8sObjects(docs);
  // The parser may place an error at the end of the text: past the last line with content.
  const lastLine = Math.max(1, text.replace(/\s+$/, '').split(/\r?\n/).length);
  for (const e of errors) {
    const line = Math.min(lc.linePos(e.offset).line, lastLine);
    out.problems.push({
      file, line,
      message: templated
        ? `document ${e.di + 1} does not parse as YAML (${e.message}); it looks like an unrendered Helm template: check the output of \`helm template\` instead`
        : `document ${e.di + 1} does not parse as YAML: ${e.message}`,
    });
  }
  for (const o of objects) {
    const kind = scalarValue(child(o.root, 'kind'));
    const name = scalarValue(childPath(o.root, ['metadata', 'name']));
    out.objects.push({
      root: o.root, doc: o.di, base: o.item === undefined ? [] : ['items', o.item],
      kind: typeof kind === 'string' ? kind : null, name: name === undefined || name === null ? null : String(name),
      source: helmSource(docs[o.di]!),
    });
  }
  return out;
}

/** 1-based line and column of a node's start. */
export function posOf(p: ParsedYaml, node: YamlNode | undefined | null): { line: number; column: number } | undefined {
  if (!node?.range) return undefined;
  const lp = p.lc.linePos(node.range[0]);
  return { line: lp.line, column: lp.col };
}

/** The pair of `key` in a map (its key node carries the line of the key). */
export function pairOf(map: unknown, key: string): Pair<YamlNode, YamlNode | null> | undefined {
  if (!isMap(map)) return undefined;
  return (map.items as Array<Pair<YamlNode, YamlNode | null>>).find((it) => (isScalar(it.key) ? it.key.value === key : (it.key as unknown) === key));
}

/** Position of `key` in `map` (the key itself), else of the map. */
export function keyPos(p: ParsedYaml, map: unknown, key: string): { line: number; column: number } | undefined {
  const pair = pairOf(map, key);
  return posOf(p, (pair?.key as YamlNode | undefined) ?? (map as YamlNode | undefined));
}

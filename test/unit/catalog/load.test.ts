import assert from 'node:assert/strict';
import {
  AGENTS,
  AgentsFileSchema,
  catalog,
  CATALOG_PARTS,
  crossCheck,
  GatesFileSchema,
  loadCatalog,
  parseCatalogFile,
  type CatalogSources,
} from '../../../server/src/engine/catalog';
import { isEngineError } from '../../../server/src/engine/errors';

/** A mutable deep copy of the built-in catalog sources. */
function sources(): { [K in keyof CatalogSources]: any } {
  return structuredClone({
    agents: CATALOG_PARTS.agents,
    domains: CATALOG_PARTS.domains,
    products: CATALOG_PARTS.products,
    workflows: CATALOG_PARTS.workflows,
    gates: CATALOG_PARTS.gates,
  }) as any;
}

/** Asserts that loading throws ERR_CONFIG_INVALID whose message names `file` and contains `fragments`. */
function rejects(src: CatalogSources, file: string, ...fragments: string[]): void {
  assert.throws(() => loadCatalog(src), (err: unknown) => {
    assert.ok(isEngineError(err), String(err));
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.ok(err.message.includes(file), err.message);
    for (const f of fragments) assert.ok(err.message.includes(f), `${err.message} should contain ${f}`);
    return true;
  });
}

describe('catalog: loading and validation', () => {
  it('loads the built-in sources again without complaint', () => {
    const again = loadCatalog(sources());
    assert.equal(again.agents.length, 25);
    assert.deepEqual(again.platformAgents, catalog.platformAgents);
    assert.deepEqual(crossCheck(CATALOG_PARTS), []);
  });

  it('rejects a bad tier tag, naming the file, the path and the entry', () => {
    const src = sources();
    src.agents[3].actions[0].tierTag = 'GOLD';
    rejects(src, 'catalog/agents.ts', '[3].actions[0].tierTag', "entry 'coder-ai'");
  });

  it('rejects an unknown field (typo) in a gate', () => {
    const src = sources();
    src.gates[7].treshold = 1;
    rejects(src, 'catalog/gates.ts', '[7]', 'treshold', "entry 'confidence'");
  });

  it('rejects a missing scope threshold', () => {
    const src = sources();
    delete src.gates[19].thresholds.production;
    rejects(src, 'catalog/gates.ts', '[19].thresholds.production');
  });

  it('rejects duplicate agent ids', () => {
    const src = sources();
    src.agents[1].id = 'req-ai';
    rejects(src, 'catalog/agents.ts', '[1].id', "duplicate agent id 'req-ai'");
  });

  it('rejects a commercial agent without a tier tag', () => {
    const src = sources();
    src.agents[15].tierTag = null;
    rejects(src, 'catalog/agents.ts', '[15].availability');
  });

  it('rejects a default action the agent does not have', () => {
    const src = sources();
    src.agents[0].domains[0].defaultAction = 'dance';
    rejects(src, 'catalog/agents.ts', '[0].domains[0].defaultAction', 'dance');
  });

  it('rejects a workflow naming an unknown agent (cross-file)', () => {
    const src = sources();
    src.workflows[6].pipeline[2].agent = 'archi-ai';
    rejects(src, 'catalog/workflows.ts', '[6].pipeline[2].agent', "unknown agent 'archi-ai'", "entry 'full-sdlc'");
  });

  it('rejects a shared agent in a template without its domain', () => {
    const src = sources();
    const step = src.workflows[7].pipeline.find((s: { agent: string }) => s.agent === 'debug-ai');
    step.domain = null;
    rejects(src, 'catalog/workflows.ts', '[7].pipeline[2].domain', 'shared agent');
  });

  it('rejects a domain list that disagrees with the agents', () => {
    const src = sources();
    src.domains.domains[2].agents = ['security-ai', 'coder-ai'];
    rejects(src, 'catalog/domains.ts', 'domains[2].agents[1]', 'coder-ai');
  });

  it('rejects a domain workflow that leaves out a domain agent', () => {
    const src = sources();
    src.workflows[1].background = ['capacity-ai'];
    rejects(src, 'catalog/workflows.ts', '[1].pipeline', 'OPERATE');
  });

  it('rejects a hierarchical workflow without a lead', () => {
    const src = sources();
    src.workflows[7].lead = null;
    rejects(src, 'catalog/workflows.ts', '[7].lead');
  });

  it('rejects an agent tier tag that differs from its domain', () => {
    const src = sources();
    src.agents[18].tierTag = 'ULTRA';
    src.agents[18].actions.forEach((a: { tierTag: string }) => { a.tierTag = 'ULTRA'; });
    rejects(src, 'catalog/agents.ts', '[18].tierTag', 'PRO');
  });

  it('rejects gates out of order', () => {
    const src = sources();
    [src.gates[0], src.gates[1]] = [src.gates[1], src.gates[0]];
    rejects(src, 'catalog/gates.ts', '[0].number');
  });

  it('parses one file on its own with the same error shape', () => {
    assert.throws(() => parseCatalogFile('catalog/gates.ts', GatesFileSchema, [{ number: 1 }]), /catalog\/gates\.ts at \[0\]\.id/);
    assert.equal(parseCatalogFile('x', AgentsFileSchema, structuredClone(AGENTS)).length, 25);
  });

  it('lists every issue in the error details', () => {
    const src = sources();
    src.agents[0].tierTag = 'X';
    src.agents[1].prCapable = 'yes';
    try {
      loadCatalog(src);
      assert.fail('should throw');
    } catch (err) {
      assert.ok(isEngineError(err));
      const issues = err.details?.['issues'] as Array<{ file: string; path: string }>;
      assert.deepEqual(issues.map((i) => i.path), ['[0].tierTag', '[1].prCapable']);
      assert.match(err.message, /and 1 more/);
    }
  });

  it('deep-freezes the catalog and its maps', () => {
    assert.ok(Object.isFrozen(catalog));
    assert.ok(Object.isFrozen(catalog.agents));
    assert.ok(Object.isFrozen(catalog.agents[0]));
    assert.ok(Object.isFrozen(catalog.agents[0]?.actions[0]));
    assert.ok(Object.isFrozen(catalog.gates[7]?.thresholds));
    assert.ok(Object.isFrozen(catalog.workflows[0]?.pipeline[0]?.params));
    assert.throws(() => { (catalog.agents as unknown as unknown[]).push({}); }, TypeError);
    assert.throws(() => { (catalog.gates[7]!.thresholds as { demo: number }).demo = 0; }, TypeError);
    assert.equal((catalog.agentsById as unknown as { set?: unknown }).set, undefined);
    assert.equal(catalog.agentsById.get('coder-ai'), catalog.agents[3]);
    assert.equal([...catalog.agentsById.keys()].length, 25);
    assert.equal(catalog.agentsById.size, 25);
  });
});

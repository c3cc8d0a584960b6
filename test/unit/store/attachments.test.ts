import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../../../server/src/config/load';
import { boundOutput, isAttachmentRef } from '../../../server/src/engine/executions/bounded-output';
import { createEngine } from '../../../server/src/engine/index';
import { MAX_INLINE_OUTPUT_BYTES, type AttachmentRef } from '../../../server/src/engine/ports';
import { reviewChecks } from '../../../server/src/skills/review-checks';
import { openStore, storeFilePath } from '../../../server/src/store';
import { FileAttachmentStore } from '../../../server/src/store/file-attachment-store';
import { anyone, settled, testSkill } from '../../support/engine-harness';

describe('store: bounded step outputs (attachments)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-attach-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps a small output inline and puts a large one in a file, referenced with size and hash', async () => {
    const files = new FileAttachmentStore(path.join(dir, 'attachments'));
    const small = { findings: [1, 2, 3] };
    assert.equal(await boundOutput(files, 'exec_0123456789abcdef', 0, small), small);
    const large = { files: Array.from({ length: 5_000 }, (_, i) => `untracked/file-${i}.txt`) };
    const json = JSON.stringify(large);
    assert.ok(json.length > MAX_INLINE_OUTPUT_BYTES);
    const ref = (await boundOutput(files, 'exec_0123456789abcdef', 2, large)) as AttachmentRef;
    assert.ok(isAttachmentRef(ref));
    assert.equal(ref.attachment, 'exec_0123456789abcdef/step-2-output.json');
    assert.equal(ref.bytes, Buffer.byteLength(json));
    assert.equal(ref.sha256, createHash('sha256').update(json).digest('hex'));
    assert.ok(ref.preview.length <= 2_000 && json.startsWith(ref.preview));
    assert.equal(await readFile(path.join(dir, 'attachments', 'exec_0123456789abcdef', 'step-2-output.json'), 'utf8'), json);
    assert.equal(await files.get('exec_0123456789abcdef', 'step-2-output.json'), json);
  });

  it('refuses names that would leave the attachments directory', async () => {
    const files = new FileAttachmentStore(path.join(dir, 'attachments'));
    await assert.rejects(files.put('../etc', 'x.json', '{}'), /not an execution id/);
    await assert.rejects(files.put('exec_0123456789abcdef', '../x.json', '{}'), /not an attachment name/);
  });

  it('an execution whose step returns 200 KB stores a bounded record; the output is in the attachment', async () => {
    const store = await openStore({ file: storeFilePath(dir) });
    const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), durable: false });
    const big = { lines: Array.from({ length: 4_000 }, (_, i) => `line ${i}: ${'x'.repeat(40)}`) };
    const engine = createEngine({
      store, audit, config: parseConfig('', path.join(dir, '.cadre.yaml'), {}), checks: reviewChecks, log: () => {},
      skills: [testSkill({ artifact: () => ({ data: big }) })],
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      attachments: new FileAttachmentStore(path.join(dir, 'attachments')),
    });
    try {
      const rec = await engine.executions.invokeRigor('review-ai', { prompt: 'review the login module' }, anyone);
      const done = await settled(engine, rec.id);
      const output = done.steps[0]!.output;
      assert.ok(isAttachmentRef(output), `step output: ${JSON.stringify(output).slice(0, 200)}`);
      assert.ok(JSON.stringify(done).length < 64 * 1024, 'the execution record stays bounded');
      const stored = JSON.parse(await readFile(path.join(dir, 'attachments', output.attachment), 'utf8')) as typeof big;
      assert.deepEqual(stored, big);
    } finally {
      await engine.executions.close();
      await audit.close();
      await store.close();
    }
  });
});

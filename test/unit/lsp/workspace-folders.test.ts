import { strict as assert } from 'node:assert';
import { pathToFileURL } from 'node:url';
import { WorkspaceFolders } from '../../../server/src/lsp/workspace-folders';

const uri = (p: string) => pathToFileURL(p).href;
const folder = (p: string, name = p.split('/').pop()!) => ({ uri: uri(p), name });

describe('lsp: workspace folders (multi-root)', () => {
  it('serves every folder of initialize in the editor\'s order, only file: folders', () => {
    const f = new WorkspaceFolders();
    f.initialize([folder('/ws/alpha'), { uri: 'vscode-vfs://github/x/y', name: 'remote' }, folder('/ws/beta')], null);
    assert.deepEqual(f.list().map((x) => x.name), ['alpha', 'beta']);
    assert.equal(f.first()?.path, '/ws/alpha');
  });

  it('falls back to rootUri, and puts the server\'s --workspace first', () => {
    const root = new WorkspaceFolders();
    root.initialize(null, uri('/ws/only'));
    assert.deepEqual(root.list().map((x) => x.path), ['/ws/only']);
    const given = new WorkspaceFolders('/ws/cli');
    given.initialize([folder('/ws/alpha'), folder('/ws/cli')], null);
    assert.deepEqual(given.list().map((x) => x.path), ['/ws/cli', '/ws/alpha']);
  });

  it('finds the folder of a document, the innermost when folders nest, none outside', () => {
    const f = new WorkspaceFolders();
    f.initialize([folder('/ws/mono'), folder('/ws/mono/packages/api'), folder('/ws/beta')], null);
    assert.equal(f.folderOf(uri('/ws/mono/packages/api/src/a.ts'))?.name, 'api');
    assert.equal(f.folderOf(uri('/ws/mono/README.md'))?.name, 'mono');
    assert.equal(f.folderOf(uri('/ws/beta/x.js'))?.name, 'beta');
    // A sibling whose name starts like a folder's is not inside it.
    assert.equal(f.folderOf(uri('/ws/beta2/x.js')), undefined);
    assert.equal(f.folderOf('untitled:Untitled-1'), undefined);
  });

  it('follows folders added and removed, and finds a folder by URI or path', () => {
    const f = new WorkspaceFolders();
    f.initialize([folder('/ws/alpha'), folder('/ws/beta')], null);
    const removed = f.change({ added: [folder('/ws/gamma'), folder('/ws/alpha')], removed: [folder('/ws/beta')] });
    assert.deepEqual(removed.map((x) => x.name), ['beta']);
    assert.deepEqual(f.list().map((x) => x.name), ['alpha', 'gamma']);
    assert.equal(f.find(uri('/ws/gamma'))?.name, 'gamma');
    assert.equal(f.find('/ws/gamma/')?.name, 'gamma');
    assert.equal(f.find(uri('/ws/beta')), undefined);
    assert.equal(f.find('relative/path'), undefined);
  });
});

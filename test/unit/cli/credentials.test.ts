/** `cadre auth login` storage (cli/src/credentials.ts): a key per server URL, in a file only its owner can read. */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { credentialsFile, loginOf, readCredentials, removeLogin, saveLogin } from '../../../cli/src/credentials';

describe('CLI credentials file', () => {
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    env = { CADRE_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), 'cadre-cred-')) };
  });

  it('keeps one key per server URL (normalized), the last login being the default', () => {
    saveLogin('http://127.0.0.1:7450/', 'cadre_a', env);
    saveLogin('HTTP://Build-Box:7450', 'cadre_b', env);
    assert.equal(loginOf('http://127.0.0.1:7450', env)?.key, 'cadre_a');
    assert.equal(loginOf('http://build-box:7450/', env)?.key, 'cadre_b');
    assert.equal(readCredentials(env).default, 'http://build-box:7450');
    assert.equal(loginOf('http://127.0.0.1:7451', env), null);
  });

  it('writes the file 0600 in a 0700 folder', function () {
    if (process.platform === 'win32') this.skip();
    saveLogin('http://127.0.0.1:7450', 'cadre_secret', env);
    assert.equal(statSync(credentialsFile(env)).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(credentialsFile(env))).mode & 0o777, 0o700);
    assert.match(readFileSync(credentialsFile(env), 'utf8'), /cadre_secret/);
  });

  it('logout forgets the key and moves the default to another server', () => {
    saveLogin('http://a:1', 'k1', env);
    saveLogin('http://b:2', 'k2', env);
    assert.equal(removeLogin('http://b:2', env), true);
    assert.equal(loginOf('http://b:2', env), null);
    assert.equal(readCredentials(env).default, 'http://a:1');
    assert.equal(removeLogin('http://b:2', env), false);
  });
});

/**
 * The default secret store: one file in the data directory (`secrets.enc.json`, mode 0600) whose
 * values are encrypted with AES-256-GCM under a key kept in a separate file OUTSIDE the data
 * directory (default `~/.config/cadre/secret.key`, mode 0600; `CADRE_SECRET_KEY_FILE`). A copy of the
 * data directory (a backup, a bug report) therefore carries no readable credential. Each value is
 * bound to its name (the name is the GCM additional data): swapping two entries in the file fails
 * to decrypt instead of handing one integration another's key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { MAX_SECRET_BYTES, nameOfArn, secretNameProblem, type SecretStore } from './secret-store';

export const SECRETS_FILE = 'secrets.enc.json';

interface Sealed { iv: string; tag: string; data: string; updatedAt: string }
interface SecretsFile { version: 1; secrets: Record<string, Sealed> }

/** Where the key lives unless `CADRE_SECRET_KEY_FILE` says otherwise (XDG config home, outside ~/.cadre). */
export function defaultKeyFile(env: NodeJS.ProcessEnv): string {
  const explicit = env['CADRE_SECRET_KEY_FILE']?.trim();
  if (explicit) return path.resolve(explicit);
  const config = env['XDG_CONFIG_HOME']?.trim() ? path.resolve(env['XDG_CONFIG_HOME']!) : path.join(homedir(), '.config');
  return path.join(config, 'cadre', 'secret.key');
}

function inside(file: string, dir: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(file));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export class LocalSecretStore implements SecretStore {
  readonly kind = 'local';
  private key: Buffer | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly opts: { dataDir: string; keyFile: string }) {
    if (inside(opts.keyFile, opts.dataDir)) {
      throw new Error(`the secret key file ${opts.keyFile} is inside the data directory ${opts.dataDir}: keep it outside (CADRE_SECRET_KEY_FILE), so a copy of the data directory carries no usable secret`);
    }
  }

  get file(): string {
    return path.join(this.opts.dataDir, SECRETS_FILE);
  }

  async get(name: string): Promise<string | null> {
    const key = nameOfArn(name);
    const sealed = this.read().secrets[key];
    if (!sealed) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.keyBytes(), Buffer.from(sealed.iv, 'base64'));
      d.setAAD(Buffer.from(key, 'utf8'));
      d.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([d.update(Buffer.from(sealed.data, 'base64')), d.final()]).toString('utf8');
    } catch {
      throw new Error(`secret ${key} does not decrypt with the key in ${this.opts.keyFile} (another key, or the file was altered)`);
    }
  }

  async put(name: string, value: string): Promise<void> {
    const bad = secretNameProblem(name);
    if (bad) throw new Error(`secret name ${JSON.stringify(name)}: ${bad}`);
    if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) throw new Error(`a secret holds at most ${MAX_SECRET_BYTES} bytes`);
    const key = nameOfArn(name);
    await this.serial(() => {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', this.keyBytes(), iv);
      c.setAAD(Buffer.from(key, 'utf8'));
      const data = Buffer.concat([c.update(value, 'utf8'), c.final()]);
      const file = this.read();
      file.secrets[key] = { iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), data: data.toString('base64'), updatedAt: new Date().toISOString() };
      this.write(file);
    });
  }

  async delete(name: string): Promise<boolean> {
    const key = nameOfArn(name);
    let removed = false;
    await this.serial(() => {
      const file = this.read();
      if (!(key in file.secrets)) return;
      delete file.secrets[key];
      removed = true;
      this.write(file);
    });
    return removed;
  }

  /** Names of the stored secrets (never their values). */
  names(): string[] {
    return Object.keys(this.read().secrets).sort();
  }

  private serial(fn: () => void): Promise<void> {
    const next = this.writing.then(fn);
    this.writing = next.catch(() => undefined);
    return next;
  }

  private read(): SecretsFile {
    if (!existsSync(this.file)) return { version: 1, secrets: {} };
    const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as SecretsFile;
    if (parsed?.version !== 1 || typeof parsed.secrets !== 'object') throw new Error(`${this.file} is not a Cadre secrets file`);
    return parsed;
  }

  /** Atomic (temporary file, then rename) and 0600 from the first byte. */
  private write(file: SecretsFile): void {
    mkdirSync(this.opts.dataDir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(file, null, 1), { mode: 0o600 });
    renameSync(tmp, this.file);
    chmodSync(this.file, 0o600);
  }

  /** Reads the key, creating it (32 random bytes, hex, 0600 in a 0700 folder) on first use. */
  private keyBytes(): Buffer {
    if (this.key) return this.key;
    const file = this.opts.keyFile;
    if (!existsSync(file)) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    }
    if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
      throw new Error(`the secret key file ${file} is readable by other users (mode ${(statSync(file).mode & 0o777).toString(8)}); chmod 600 it`);
    }
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`the secret key file ${file} does not hold a 256-bit key (64 hex characters)`);
    this.key = Buffer.from(hex, 'hex');
    return this.key;
  }
}

import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { defaultKey, type ServiceKey } from '../keys/model';
import { generateSecret } from '../security/random';
import type { ServeConfig } from './config';
import { loadKeysFile } from './keys';
import { assertPrivateFile, checkSecret, exists, readPrivateFile } from './secret-rules';

function readSecretFile(path: string): string {
  assertPrivateFile(path);
  return readFileSync(path, 'utf8').trim();
}

/** `--secret-file`: the file must exist and hold a valid secret. */
export function loadSecretFile(path: string): string {
  return checkSecret(readPrivateFile(path), `secret file ${path}`);
}

/**
 * With no configured secret, the first start creates `<dir>/secret` (0600) and later starts reuse it,
 * under the same checks as `--secret-file`. Created with O_EXCL, so a symlink planted after the
 * check is never written through.
 */
export function loadOrCreateSecret(dir: string): { secret: string; path: string; created: boolean } {
  const path = join(dir, 'secret');
  if (exists(path)) {
    const stored = readSecretFile(path);
    if (stored !== '') return { secret: checkSecret(stored, `secret file ${path}`), path, created: false };
    unlinkSync(path); // an empty file (a start that died mid-write) is replaced
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = generateSecret();
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, `${secret}\n`);
  } finally {
    closeSync(fd);
  }
  // The umask may have narrowed the mode further; it can never have widened it.
  assertPrivateFile(path);
  return { secret, path, created: true };
}

/** The secret in effect and, when it came from a file, a start-up log line saying which (never the secret itself). */
export function resolveSecret(config: Pick<ServeConfig, 'secret' | 'secretFile' | 'dir'>): { secret: string; origin: string | null } {
  if (config.secret !== null) return { secret: config.secret, origin: null };
  if (config.secretFile !== null) return { secret: loadSecretFile(config.secretFile), origin: `using the secret in ${config.secretFile}` };
  const stored = loadOrCreateSecret(config.dir);
  return { secret: stored.secret, origin: `${stored.created ? 'generated a new secret in' : 'using the secret in'} ${stored.path}` };
}

/** The service keys at start (API.md §17): the keys file's, or the secret as the one key `default`. */
export function resolveKeys(config: Pick<ServeConfig, 'secret' | 'secretFile' | 'dir' | 'keysFile'>): { keys: ServiceKey[]; origin: string | null } {
  if (config.keysFile === null) {
    const { secret, origin } = resolveSecret(config);
    return { keys: [defaultKey(secret)], origin };
  }
  const keys = loadKeysFile(config.keysFile);
  return { keys, origin: `using ${keys.length} keys from ${config.keysFile}` };
}

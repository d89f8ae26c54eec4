import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSecret } from '../security/random';

/** With no configured secret, the first start creates `<dir>/secret` (0600) and later starts reuse it. */
export function loadOrCreateSecret(dir: string): { secret: string; path: string; created: boolean } {
  const path = join(dir, 'secret');
  if (existsSync(path)) {
    const secret = readFileSync(path, 'utf8').trim();
    if (secret !== '') return { secret, path, created: false };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = generateSecret();
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // the mode option only applies to a file that did not exist yet
  return { secret, path, created: true };
}

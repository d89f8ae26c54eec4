import { statSync } from 'node:fs';
import type { Logger } from '../http/log';
import { digestOf, type ServiceKey } from './model';

/**
 * The keys in force, looked up by the SHA-256 of the presented credential (API.md §17): the lookup
 * costs the same for one key or a hundred, and what its timing could reveal is a digest, from which
 * no key can be found. `replace` swaps the whole set at once, so a request sees the old set or the
 * new one, never a mix; one that found its key keeps it to the end.
 */
export function createKeyRing(keys: readonly ServiceKey[]) {
  let byDigest = indexed(keys);
  return {
    find: (authorization: string | null): ServiceKey | undefined => (authorization === null ? undefined : byDigest.get(digestOf(authorization))),
    replace(next: readonly ServiceKey[]): void {
      byDigest = indexed(next);
    },
    get size(): number {
      return byDigest.size;
    },
  };
}
export type KeyRing = ReturnType<typeof createKeyRing>;

const indexed = (keys: readonly ServiceKey[]) => new Map(keys.map((key) => [key.digest, key]));

/** What identifies a version of the file: a rename (as `gatehouse keys` writes) changes the inode, an edit the rest. */
function versionOf(path: string): string {
  try {
    const stat = statSync(path, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return 'missing';
  }
}

/**
 * Re-reads the keys file on `reload()` (SIGHUP) and whenever it changes, checked every `everyMs`.
 * A file that does not load keeps the keys in force: one error line per version of the file, and
 * `onFailure` (the metric) for each attempt.
 */
export function watchKeysFile(deps: {
  path: string;
  ring: KeyRing;
  load: (path: string) => ServiceKey[];
  log: Logger;
  onFailure?: () => void;
  everyMs?: number;
}): { reload(): void; stop(): void } {
  let seen = versionOf(deps.path);
  const reload = () => {
    seen = versionOf(deps.path);
    try {
      const keys = deps.load(deps.path);
      deps.ring.replace(keys);
      deps.log({ level: 'info', message: `loaded ${keys.length} keys from ${deps.path}` });
    } catch (error) {
      deps.onFailure?.();
      const reason = error instanceof Error ? error.message : String(error);
      deps.log({ level: 'error', message: `keys file not reloaded, keeping the ${deps.ring.size} keys in force: ${reason}` });
    }
  };
  const timer = setInterval(() => {
    if (versionOf(deps.path) !== seen) reload();
  }, deps.everyMs ?? 1000);
  timer.unref();
  return { reload, stop: () => clearInterval(timer) };
}

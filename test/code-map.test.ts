import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** docs/architecture.md, checked: which room may import what, the shape of a feature, no cycles, short files. */
const SRC = resolve(import.meta.dir, '../src');
const FEATURES = ['users', 'passwords', 'password-reset', 'email-verification', 'email-update', 'email-sign-in', 'totp', 'recovery-code', 'status', 'passkeys', 'api-keys', 'events', 'metrics'];
/** store.ts holds the interface and the SQLite implementation, store.pg.ts the PostgreSQL one. */
const FEATURE_FILES = ['model.ts', 'routes.ts', 'service.ts', 'store.pg.ts', 'store.ts'];
/** Folders inside a feature: pieces only that feature needs (the wiring may name them too). */
const FEATURE_SUBFOLDERS: Record<string, string[]> = { passkeys: ['webauthn'] };
/** Features that serve no path (the webhook sender, the command-line transfer): the same files without routes. */
const WORKERS = ['webhooks', 'transfer'];
const WORKER_FILES = ['model.ts', 'service.ts', 'store.pg.ts', 'store.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [relative(SRC, path)] : [];
  });
}

const files = sourceFiles(SRC);
const textOf = (file: string) => readFileSync(join(SRC, file), 'utf8');
const specifiers = (file: string) => [...textOf(file).matchAll(/^(?:import|export)[^;]*? from '([^']+)'/gms)].map((m) => m[1]!);

/** Imports inside src, as paths relative to src ('users/store.ts'). */
function localImports(file: string): string[] {
  return specifiers(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(SRC, resolve(SRC, dirname(file), spec)))
    .map((path) => (path.endsWith('.ts') || path.endsWith('.json') || path.endsWith('.sql') || path.endsWith('.txt') ? path : `${path}.ts`))
    .filter((path) => !path.startsWith('..'));
}

const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '');

describe('code map', () => {
  test('every feature folder has exactly routes, service, store (SQLite and PostgreSQL) and model (a worker folder no routes)', () => {
    for (const feature of FEATURES) {
      expect({ feature, files: readdirSync(join(SRC, feature)).sort() }).toEqual({ feature, files: [...FEATURE_FILES, ...(FEATURE_SUBFOLDERS[feature] ?? [])].sort() });
    }
    for (const worker of WORKERS) {
      expect({ worker, files: readdirSync(join(SRC, worker)).sort() }).toEqual({ worker, files: WORKER_FILES });
    }
  });

  test('services import neither Elysia nor Drizzle; routes hold no SQL', () => {
    for (const file of files.filter((f) => f.endsWith('/service.ts'))) {
      expect({ file, bad: specifiers(file).filter((s) => s === 'elysia' || s.startsWith('drizzle-orm') || s.includes('db/')) }).toEqual({ file, bad: [] });
    }
    for (const file of files.filter((f) => f.endsWith('/routes.ts'))) {
      expect({ file, bad: specifiers(file).filter((s) => s.startsWith('drizzle-orm') || s.includes('/store') || s.includes('db/')) }).toEqual({ file, bad: [] });
    }
  });

  test('Drizzle and the database only in store files and db/', () => {
    const allowed = (file: string) => /\/store(\.pg)?\.ts$/.test(file) || folderOf(file) === 'db' || file === 'stores.ts';
    for (const file of files.filter((f) => !allowed(f))) {
      const bad = specifiers(file).filter((s) => s.startsWith('drizzle-orm') || s === 'bun:sqlite' || (s.includes('db/') && !/db\/(pg-)?client$/.test(s)));
      expect({ file, bad }).toEqual({ file, bad: [] });
    }
  });

  test('lower layers never import upward', () => {
    const within = (...rooms: string[]) => (target: string) => rooms.includes(folderOf(target)) || target === 'errors.ts';
    const rules: Record<string, (target: string) => boolean> = {
      // pure: its own files and the error codes
      security: within('security'),
      // the shared rooms above it: each itself and what is below (the breach check's cache is the limits' bounded map)
      hashing: within('hashing', 'security'),
      'breach-check': (target) => within('breach-check', 'security')(target) || target === 'limits/bounded-map.ts',
      limits: within('limits', 'security'),
      sweeps: within('sweeps', 'security', 'http'),
      keys: within('keys', 'security', 'http'),
      // plumbing: never the database, a feature or the wiring
      http: (target) => ['http', 'security'].includes(folderOf(target)) || ['errors.ts', 'version.ts'].includes(target),
      db: (target) => folderOf(target) === 'db' || target === 'errors.ts' || target.startsWith('../drizzle'),
      'code-requests': within('code-requests', 'db', 'http', 'security', 'limits', 'sweeps'),
      // every store appends events, so the events room stands below the features and the code requests
      events: within('events', 'db', 'http', 'security', 'sweeps'),
    };
    for (const file of files) {
      const rule = (file.startsWith('passkeys/webauthn/') ? (target: string) => target.startsWith('passkeys/webauthn/') : rules[folderOf(file)]) ?? (file === 'errors.ts' ? () => false : undefined);
      if (rule === undefined) continue;
      const bad = localImports(file).filter((target) => !rule(target) && !target.includes('.json') && !target.endsWith('.sql') && !target.endsWith('.txt'));
      expect({ file, bad }).toEqual({ file, bad: [] });
    }
  });

  test('no import cycles', () => {
    const graph = new Map(files.map((file) => [file, localImports(file).filter((target) => target.endsWith('.ts'))]));
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[][] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file]);
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  test('files stay short', () => {
    const long = files.filter((file) => textOf(file).split('\n').length > 220);
    expect(long).toEqual([]);
  });
});

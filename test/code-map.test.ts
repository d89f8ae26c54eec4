import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The README's "Code map", checked: which folder may import what, and the shape of a feature. */
const SRC = resolve(import.meta.dir, '../src');
const FEATURES = ['users', 'passwords', 'password-reset', 'email-verification', 'email-update', 'email-sign-in', 'totp', 'recovery-code', 'status', 'passkeys', 'api-keys', 'events', 'metrics'];
/** store.ts holds the interface and the SQLite implementation, store.pg.ts the PostgreSQL one. */
const FEATURE_FILES = ['model.ts', 'routes.ts', 'service.ts', 'store.pg.ts', 'store.ts'];
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
      expect({ feature, files: readdirSync(join(SRC, feature)).sort() }).toEqual({ feature, files: FEATURE_FILES });
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
    const rules: Record<string, (target: string) => boolean> = {
      // pure: its own files and the error codes
      security: (target) => folderOf(target) === 'security' || target === 'errors.ts',
      // plumbing: never the database, a feature or the wiring
      http: (target) => ['http', 'security'].includes(folderOf(target)) || ['errors.ts', 'version.ts'].includes(target),
      db: (target) => folderOf(target) === 'db' || target === 'errors.ts' || target.startsWith('../drizzle'),
      'code-requests': (target) => ['code-requests', 'db', 'http', 'security'].includes(folderOf(target)) || target === 'errors.ts',
    };
    for (const file of files) {
      const rule = rules[folderOf(file)] ?? (file === 'errors.ts' ? () => false : undefined);
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

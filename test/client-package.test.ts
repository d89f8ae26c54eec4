import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killAllServers, makeTempDir, REPO_ROOT, removeDir, runToExit, startServer } from './support/server-process';

/**
 * `cd client && npm pack` makes a package that installs and works outside this repository (issue 25):
 * packed, installed from the tarball into an empty project, imported by Node and type-checked as a
 * consumer's TypeScript would, then used against a real server process over the network.
 */
const work = makeTempDir('gatehouse-client-pack-');
afterAll(async () => {
  await killAllServers();
  removeDir(work);
});

const run = async (command: string[], cwd: string) => {
  const result = await runToExit([], { command, cwd, env: { PATH: `${join(REPO_ROOT, 'node_modules/.bin')}:${process.env.PATH}`, HOME: process.env.HOME ?? '/root' }, timeoutMs: 120_000 });
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} exited ${result.exitCode}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
};

describe('@gatehouse/client as a package', () => {
  test('npm pack, install the tarball, import it with Node, check its types, call a real server', async () => {
    await run(['npm', 'pack', '--pack-destination', work], join(REPO_ROOT, 'client'));
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBe('gatehouse-client-0.1.0.tgz');
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(['npm', 'install', '--no-audit', '--no-fund', join(work, tarball!)], app);
    const installed = await Bun.file(join(app, 'node_modules/@gatehouse/client/package.json')).json();
    expect(installed).toMatchObject({ name: '@gatehouse/client', license: 'Apache-2.0' });

    // A consumer's TypeScript (NodeNext, no Bun types) finds the declarations and the per-operation codes.
    writeFileSync(
      join(app, 'check.ts'),
      `import { createGatehouseClient } from '@gatehouse/client';
const gatehouse = createGatehouseClient({ url: 'http://127.0.0.1:1', secret: 'x' });
const user = await gatehouse.getUser({ id: 'x' });
if (user.error !== null && user.error.code === 'NOT_FOUND') console.log(user.error.status);
if (user.error === null) console.log(user.data.email_verified);
// @ts-expect-error getUser never answers WEAK_PASSWORD
if (user.error !== null && user.error.code === 'WEAK_PASSWORD') console.log('never');
`,
    );
    const compilerOptions = { noEmit: true, strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
    await run(['tsc', '-p', 'tsconfig.json'], app);

    const server = await startServer();
    writeFileSync(
      join(app, 'use.mjs'),
      `import { createGatehouseClient } from '@gatehouse/client';
const gatehouse = createGatehouseClient({ url: process.argv[2], secret: process.argv[3] });
const created = await gatehouse.createUser({ password: 'correct horse battery staple', email: 'ada@example.com' });
const read = await gatehouse.getUser({ id: created.data.id });
const missing = await gatehouse.getUser({ id: 'nobody' });
console.log(JSON.stringify({ email: read.data.email, missing: missing.error }));
`,
    );
    const out = await run(['node', 'use.mjs', server.url, server.secret], app);
    expect(JSON.parse(out.trim())).toEqual({ email: 'ada@example.com', missing: { status: 404, code: 'NOT_FOUND' } });
  }, 240_000);
});

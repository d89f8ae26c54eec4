import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import pkg from '../package.json';
import { runToExit, startServer, tempDirsOfThisFile } from './support/server-process';
import { STRONG_PASSWORD, WEAK_PASSWORD } from './support/harness';

const tempDir = tempDirsOfThisFile();

test('the tests spawn the bun binary that runs them', () => {
  expect(basename(process.execPath)).toMatch(/^bun/);
});

describe('one-shot commands', () => {
  test('--version prints the package.json version and exits 0', async () => {
    const result = await runToExit(['--version']);
    expect(result).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  test('generate-secret prints a new 40-character secret each time', async () => {
    const [first, second] = await Promise.all([runToExit(['generate-secret']), runToExit(['generate-secret'])]);
    for (const result of [first, second]) {
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/^[abcdefghijkmnpqrstuvwxyz23456789]{40}\n$/);
    }
    expect(first!.stdout).not.toBe(second!.stdout);
  });

  test('--help prints the usage and exits 0', async () => {
    const result = await runToExit(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('gatehouse serve');
    expect(result.stdout).toContain('--pwned-check');
  });
});

describe('bad arguments stop the program with exit code 2 and one line on stderr', () => {
  const cases: [string, string[], Record<string, string>?][] = [
    ['an unknown flag', ['serve', '--bogus']],
    ['an unknown flag with a value', ['serve', '--verbose=yes']],
    ['a port above 65535', ['serve', '--port', '70000']],
    ['a non-numeric port', ['serve', '--port', 'abc']],
    ['a negative port', ['serve', '--port', '-1']],
    ['a fractional port', ['serve', '--port=80.5']],
    ['a bad --pwned-check', ['serve', '--pwned-check', 'sometimes']],
    ['a bad --pwned-api-url', ['serve', '--pwned-api-url', 'not a url']],
    ['a non-http --pwned-api-url', ['serve', '--pwned-api-url', 'ftp://example.com']],
    ['a missing value', ['serve', '--port']],
    ['an empty secret', ['serve', '--secret', '']],
    ['a secret with surrounding spaces', ['serve', '--secret', ' padded-secret-0123456789 ']],
    ['an unknown command', ['frobnicate']],
    ['an argument after generate-secret', ['generate-secret', '--bogus']],
    ['an argument after --version', ['--version', 'extra']],
    ['no command', []],
    ['a bad port in GATEHOUSE_PORT', ['serve'], { GATEHOUSE_PORT: 'abc' }],
    ['a bad mode in GATEHOUSE_PWNED_CHECK', ['serve'], { GATEHOUSE_PWNED_CHECK: 'maybe' }],
    ['a bad URL in GATEHOUSE_PWNED_API_URL', ['serve'], { GATEHOUSE_PWNED_API_URL: 'nope' }],
  ];

  test.each(cases)('%s', async (_, args, env = {}) => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // The data dir comes first so that, should the arguments be accepted, nothing is written to the repo.
    const fullArgs = args[0] === 'serve' ? ['serve', '--dir', dataDir, ...args.slice(1)] : args;
    const result = await runToExit(fullArgs, { env: { GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_PORT: '0', ...env } });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^gatehouse: [^\n]+\n$/);
    expect(existsSync(dataDir)).toBe(false);
  });

  test.each([
    ['an address that is not one', ['--host', '999.999.1.1']],
    ['a data directory that cannot be made', ['--dir', '/proc/gatehouse-cannot/data']],
  ])('%s: exit code 2 and one line, no stack trace', async (_, flags) => {
    const args = ['serve', '--port', '0', '--dir', join(tempDir(), 'data'), ...flags];
    const result = await runToExit(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^gatehouse: cannot serve [^\n]+\n$/);
  });

  test('a port already in use: exit code 2 and one line naming the port', async () => {
    const taken = await startServer({ dir: tempDir() });
    const result = await runToExit(['serve', '--port', String(taken.port), '--dir', join(tempDir(), 'data')]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^gatehouse: cannot serve on 127\\.0\\.0\\.1:${taken.port} [^\n]+\n$`));
    expect(await taken.stop()).toBe(0);
  });

  test('the message names the bad value', async () => {
    const result = await runToExit(['serve', '--port', '70000']);
    expect(result.stderr).toContain('70000');
  });
});

describe('environment variables', () => {
  test('GATEHOUSE_PORT, GATEHOUSE_DATA_DIR, GATEHOUSE_SECRET and GATEHOUSE_PWNED_CHECK configure serve', async () => {
    const dir = tempDir();
    const server = await startServer({
      dir,
      args: ['serve'],
      env: { GATEHOUSE_PORT: '0', GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_DATA_DIR: dir, GATEHOUSE_SECRET: 'env-secret-value-123', GATEHOUSE_PWNED_CHECK: 'off' },
    });
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const res = await server.request('POST', '/users', { password: WEAK_PASSWORD });
    expect(res.status).toBe(200); // the check is off
    expect(existsSync(join(dir, 'gatehouse.db'))).toBe(true);
    expect(existsSync(join(dir, 'secret'))).toBe(false);
    expect((await fetch(`${server.url}/users`, { headers: { authorization: 'env-secret-value-123' } })).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  test('a flag beats its variable', async () => {
    const dir = tempDir();
    const server = await startServer({
      dir,
      extraArgs: ['--secret', 'flag-secret-value-456'],
      env: { GATEHOUSE_PORT: '70000', GATEHOUSE_SECRET: 'env-secret-value-123', GATEHOUSE_PWNED_CHECK: 'off', GATEHOUSE_DATA_DIR: join(dir, 'unused') },
    });
    expect(server.secret).toBe('flag-secret-value-456');
    expect((await fetch(`${server.url}/users`, { headers: { authorization: 'env-secret-value-123' } })).status).toBe(401);
    expect((await server.request('GET', '/users')).status).toBe(200);
    // --pwned-check offline from the default args beats GATEHOUSE_PWNED_CHECK=off.
    const weak = await server.request('POST', '/users', { password: WEAK_PASSWORD });
    expect(await weak.json()).toEqual({ error: 'WEAK_PASSWORD' });
    expect((await server.request('POST', '/users', { password: STRONG_PASSWORD })).status).toBe(200);
    expect(existsSync(join(dir, 'gatehouse.db'))).toBe(true);
    expect(existsSync(join(dir, 'unused'))).toBe(false);
    expect(await server.stop()).toBe(0);
  });
});

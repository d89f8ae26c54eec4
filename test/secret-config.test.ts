import { describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToExit, startServer, tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
const GOOD_SECRET = 'a-good-secret-0123456789';

/** Runs `serve` expecting it to refuse: exit 2, one line on stderr, nothing created in the data dir. */
async function expectRefused(args: string[], env: Record<string, string> = {}): Promise<string> {
  const dataDir = join(tempDir(), 'data');
  const result = await runToExit(['serve', '--port', '0', '--pwned-check', 'off', '--dir', dataDir, ...args], { env });
  expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 2, stdout: '' });
  expect(result.stderr).toMatch(/^gatehouse: [^\n]+\n$/);
  expect(existsSync(dataDir)).toBe(false);
  return result.stderr;
}

function writeSecretFile(content: string, mode: number): string {
  const path = join(tempDir(), 'secret.txt');
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
  return path;
}

describe('the secret: at least 16 characters of printable ASCII (API.md §9)', () => {
  test.each([
    ['one character', 'a'],
    ['15 characters', 'x'.repeat(15)],
    ['non-ASCII', 'ü'.repeat(20)],
    ['a control character', `${'x'.repeat(10)}\u0007${'y'.repeat(10)}`],
    ['a tab inside', `${'x'.repeat(10)}\t${'y'.repeat(10)}`],
  ])('%s is refused, from the flag and from GATEHOUSE_SECRET, without repeating it', async (_, secret) => {
    for (const stderr of [await expectRefused([`--secret=${secret}`]), await expectRefused([], { GATEHOUSE_SECRET: secret })]) {
      expect(stderr).toContain('secret');
      if (secret.length > 1) expect(stderr).not.toContain(secret);
    }
  });

  test('exactly 16 printable characters, spaces and punctuation inside, start the server; a leading dash needs --secret=', async () => {
    const secret = '-a b!c"d#e$f%g&h';
    expect(await expectRefused(['--secret', secret])).toContain('--secret=');
    const server = await startServer({ dir: tempDir(), extraArgs: [`--secret=${secret}`] });
    expect(server.secret).toBe(secret);
    expect((await server.request('GET', '/users')).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });
});

describe('--secret-file and GATEHOUSE_SECRET_FILE', () => {
  test('a private file is read (a trailing newline is not part of the secret)', async () => {
    const path = writeSecretFile(`${GOOD_SECRET}\n`, 0o600);
    for (const options of [{ extraArgs: ['--secret-file', path] }, { env: { GATEHOUSE_SECRET_FILE: path } }]) {
      const dir = tempDir();
      const server = await startServer({ dir, ...options });
      expect(server.secret).toBe(GOOD_SECRET);
      expect((await server.request('GET', '/users')).status).toBe(200);
      expect(existsSync(join(dir, 'secret'))).toBe(false);
      expect(await server.stop()).toBe(0);
    }
  });

  test.each([
    ['readable by others', 0o604],
    ['readable by group', 0o640],
    ['readable by everyone', 0o644],
  ])('a file %s is refused, and the message says so', async (_, mode) => {
    const path = writeSecretFile(GOOD_SECRET, mode);
    const stderr = await expectRefused(['--secret-file', path]);
    expect(stderr).toContain(path);
    expect(stderr).toContain('readable by group or others');
    expect(stderr).not.toContain(GOOD_SECRET);
  });

  test('a symlink is refused, even to a private file', async () => {
    const target = writeSecretFile(GOOD_SECRET, 0o600);
    const link = join(tempDir(), 'link');
    symlinkSync(target, link);
    expect(await expectRefused(['--secret-file', link])).toContain('symlink');
  });

  test('a missing file, a directory, and a file holding a short secret are refused', async () => {
    expect(await expectRefused(['--secret-file', join(tempDir(), 'nothing-here')])).toContain('does not exist');
    const directory = tempDir();
    chmodSync(directory, 0o700);
    expect(await expectRefused(['--secret-file', directory])).toContain('not a regular file');
    expect(await expectRefused(['--secret-file', writeSecretFile('short\n', 0o600)])).toContain('at least 16');
  });

  test('--secret and --secret-file together are refused; a flag beats the other kind of variable', async () => {
    const path = writeSecretFile(GOOD_SECRET, 0o600);
    await expectRefused(['--secret', 'another-secret-0123456789', '--secret-file', path]);
    await expectRefused([], { GATEHOUSE_SECRET: 'another-secret-0123456789', GATEHOUSE_SECRET_FILE: path });
    const server = await startServer({ dir: tempDir(), extraArgs: ['--secret-file', path], env: { GATEHOUSE_SECRET: 'env-secret-0123456789' } });
    expect(server.secret).toBe(GOOD_SECRET);
    expect((await server.request('GET', '/users')).status).toBe(200);
    expect((await fetch(`${server.url}/users`, { headers: { authorization: 'env-secret-0123456789' } })).status).toBe(401);
    expect(await server.stop()).toBe(0);
  });
});

describe('the generated <dir>/secret', () => {
  test('is created 0600 and reused', async () => {
    const dir = tempDir();
    const first = await startServer({ dir });
    expect(await first.stop()).toBe(0);
    expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600);
    const second = await startServer({ dir });
    expect(second.secret).toBe(first.secret);
    expect(await second.stop()).toBe(0);
  });

  test('an existing one readable by others is refused, not silently reused', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secret'), `${GOOD_SECRET}\n`);
    chmodSync(join(dir, 'secret'), 0o644);
    const result = await runToExit(['serve', '--port', '0', '--dir', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^gatehouse: secret file [^\n]+ is readable by group or others \(mode 0644\); chmod 600 it\n$/);
    expect(existsSync(join(dir, 'gatehouse.db'))).toBe(false);
  });

  test('a symlink at <dir>/secret is refused and its target left alone', async () => {
    const dir = tempDir();
    const elsewhere = join(tempDir(), 'elsewhere');
    writeFileSync(elsewhere, '');
    symlinkSync(elsewhere, join(dir, 'secret'));
    const result = await runToExit(['serve', '--port', '0', '--dir', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^gatehouse: secret file [^\n]+ is a symlink; give the file itself\n$/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('');
  });

  test('a dangling symlink at <dir>/secret is not written through', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    const target = join(tempDir(), 'planted');
    symlinkSync(target, join(dir, 'secret'));
    const result = await runToExit(['serve', '--port', '0', '--dir', dir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('symlink');
    expect(existsSync(target)).toBe(false);
  });
});

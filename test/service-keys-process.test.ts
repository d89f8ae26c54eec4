// Service keys (API.md §17) on real server processes: the keys file refused at start with the line
// named, `gatehouse keys add|list|remove`, reload on change and on SIGHUP, a broken file that keeps the
// keys in force, and no key ever in the file or the log.
import { describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToExit, startServer, tempDirsOfThisFile, type ServerProcess } from './support/server-process';
import { waitUntil } from './support/webhook-receiver';

const tempDir = tempDirsOfThisFile();
const DIGEST = `sha256:${'ab'.repeat(32)}`;

function keysFile(content: string, mode = 0o600): string {
  const path = join(tempDir(), 'keys');
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
  return path;
}

/** `gatehouse keys ...`; `add` answers the printed key. */
async function keys(...args: string[]) {
  return runToExit(['keys', ...args]);
}
async function addKey(path: string, name: string, scope: string): Promise<string> {
  const result = await keys('add', name, '--scope', scope, '--keys-file', path);
  expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 0, stderr: expect.stringContaining(`added key '${name}'`) });
  return result.stdout.trim();
}

/** Runs `serve` expecting it to refuse: exit 2, one line on stderr, nothing created in the data dir. */
async function expectRefused(args: string[], env: Record<string, string> = {}): Promise<string> {
  const dataDir = join(tempDir(), 'data');
  const result = await runToExit(['serve', '--port', '0', '--pwned-check', 'off', '--dir', dataDir, ...args], { env });
  expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 2, stdout: '' });
  expect(result.stderr).toMatch(/^gatehouse: [^\n]+\n$/);
  expect(existsSync(dataDir)).toBe(false);
  return result.stderr;
}

const statusWith = async (server: ServerProcess, key: string, method = 'GET', path = '/') =>
  (await fetch(`${server.url}${path}`, { method, headers: { authorization: key } })).status;

describe('the keys file at start (API.md §17)', () => {
  test('a malformed line, a duplicate name or key, an unknown operationId: exit 2 naming the line', async () => {
    const good = `# comment\napp * ${DIGEST}\n`;
    const cases: [string, string][] = [
      [`${good}support read\n`, 'line 3: expected NAME SCOPE DIGEST'],
      [`${good}support read sha256:1234\n`, 'line 3: the digest must be'],
      [`${good}support read ghk_pastedkeynotadigest0123456789abcdefghijklmno\n`, 'line 3: the digest must be'],
      [`${good}\napp read sha256:${'cd'.repeat(32)}\n`, "line 4: the name 'app' is already on line 2"],
      [`${good}other read ${DIGEST}\n`, 'line 3: the same key as line 2'],
      [`${good}support getUser,noSuchOperation sha256:${'cd'.repeat(32)}\n`, "line 3: unknown operationId 'noSuchOperation'"],
      [`${good}Support read sha256:${'cd'.repeat(32)}\n`, 'line 3: invalid name'],
      [`${good}support ghk_pastedkeyinthescopecolumn0123456789abcdefgh sha256:${'cd'.repeat(32)}\n`, 'line 3: unknown operationId (a scope is'],
      ['# only a comment\n', 'holds no key'],
    ];
    for (const [content, message] of cases) {
      const path = keysFile(content);
      const stderr = await expectRefused(['--keys-file', path]);
      expect(stderr).toContain(path);
      expect(stderr).toContain(message);
      expect(stderr).not.toContain('ghk_');
    }
  });

  test('refused with --secret or --secret-file, from flags or variables; needs mode 0600 like a secret file', async () => {
    const path = keysFile(`app * ${DIGEST}\n`);
    const secret = 'a-secret-of-at-least-16-characters';
    expect(await expectRefused(['--keys-file', path, '--secret', secret])).toContain('not both');
    expect(await expectRefused(['--keys-file', path], { GATEHOUSE_SECRET: secret })).toContain('not both');
    expect(await expectRefused(['--secret-file', path], { GATEHOUSE_KEYS_FILE: path })).toContain('not both');
    chmodSync(path, 0o640);
    expect(await expectRefused(['--keys-file', path])).toContain(`keys file ${path} is readable by group or others`);
    expect(await expectRefused(['--keys-file', join(tempDir(), 'missing')])).toContain('does not exist');
  });
});

describe('gatehouse keys add|list|remove', () => {
  test('add prints a new key once; the file (mode 0600) holds only its digest; list shows 8 digits; remove deletes the line', async () => {
    const path = join(tempDir(), 'keys');
    const first = await addKey(path, 'app', '*');
    const second = await addKey(path, 'support', 'read');
    const third = await addKey(path, 'tool', 'getUser,listUsers,disableUser');
    for (const key of [first, second, third]) expect(key).toMatch(/^ghk_[A-Za-z0-9_-]{43}$/);
    expect(new Set([first, second, third]).size).toBe(3);
    const text = readFileSync(path, 'utf8');
    for (const key of [first, second, third]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(4));
      expect(text).toContain(`sha256:${new Bun.CryptoHasher('sha256').update(key).digest('hex')}`);
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const listed = await keys('list', '--keys-file', path);
    expect(listed.exitCode).toBe(0);
    const rows = listed.stdout.trim().split('\n').map((line) => line.split(/\s+/));
    expect(rows.map(([name, scope]) => [name, scope])).toEqual([['app', '*'], ['support', 'read'], ['tool', 'getUser,listUsers,disableUser']]);
    for (const row of rows) expect(row[2]).toMatch(/^sha256:[0-9a-f]{8}$/);

    expect((await keys('add', 'app', '--scope', 'read', '--keys-file', path)).stderr).toContain("already has a key named 'app'");
    expect((await keys('add', 'other', '--scope', 'getUser,nope', '--keys-file', path)).exitCode).toBe(2);
    expect((await keys('add', 'other', '--keys-file', path)).stderr).toContain('missing --scope');
    expect((await keys('remove', 'nobody', '--keys-file', path)).exitCode).toBe(2);
    expect(readFileSync(path, 'utf8')).toBe(text);
    const removed = await runToExit(['keys', 'remove', 'support'], { env: { GATEHOUSE_KEYS_FILE: path } });
    expect(removed.exitCode).toBe(0);
    expect(readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').map((line) => line.split(' ')[0])).toEqual(['app', 'tool']);
    expect((await keys('list')).stderr).toContain('--keys-file');
  });

  test('each subcommand has --help', async () => {
    for (const args of [['--help'], ['add', '--help'], ['list', '-h'], ['remove', 'x', '--help']]) {
      const help = await keys(...args);
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain('gatehouse keys add NAME --scope SCOPE');
    }
    expect((await runToExit(['help', 'keys'])).stdout).toContain('gatehouse keys remove NAME');
    expect((await runToExit(['serve', '--help'])).stdout).toContain('--keys-file F');
  });
});

describe('reload (API.md §17)', () => {
  test('a key added is accepted within seconds, a broken file keeps the keys in force, SIGHUP reloads, a removed key is refused; no key is logged', async () => {
    const path = join(tempDir(), 'keys');
    const app = await addKey(path, 'app', '*');
    const server = await startServer({ extraArgs: ['--keys-file', path] });
    try {
      expect(await statusWith(server, app)).toBe(200);
      const support = await addKey(path, 'support', 'read');
      await waitUntil(async () => (await statusWith(server, support)) === 200, 5000);
      expect(await statusWith(server, support, 'DELETE', '/users/nosuchuser')).toBe(403);

      // Broken: one line the parser refuses. The keys in force keep working, one error line, counted.
      const good = readFileSync(path, 'utf8');
      writeFileSync(path, `${good}broken line\n`);
      await waitUntil(() => server.lines.some((line) => line.level === 'error' && /keys file not reloaded/.test(String(line.message))), 5000);
      expect(await statusWith(server, app)).toBe(200);
      expect(await statusWith(server, support)).toBe(200);
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: app } })).text();
      expect(metrics).toMatch(/^gatehouse_keys_reload_failures_total [1-9]/m);
      expect(metrics).toMatch(/^gatehouse_requests_by_key_total\{key="support"\} [1-9]/m);
      const failure = server.lines.find((line) => line.level === 'error')!;
      expect(String(failure.message)).toContain('line 3');

      // SIGHUP reloads even an unchanged file.
      writeFileSync(path, good);
      await waitUntil(() => server.lines.filter((line) => /^loaded 2 keys/.test(String(line.message))).length === 2, 5000);
      server.proc.kill('SIGHUP');
      await waitUntil(() => server.lines.filter((line) => /^loaded 2 keys/.test(String(line.message))).length === 3, 5000);
      expect(server.proc.exitCode).toBeNull();

      expect((await keys('remove', 'support', '--keys-file', path)).exitCode).toBe(0);
      await waitUntil(async () => (await statusWith(server, support)) === 401, 5000);
      expect(await statusWith(server, app)).toBe(200);

      const written = JSON.stringify(server.lines) + server.stderr();
      expect(written).not.toContain('ghk_');
      for (const key of [app, support]) expect(written).not.toContain(key.slice(4));
      expect(server.lines.filter((line) => line.status !== undefined).map((line) => line.key)).toContain('support');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);
});

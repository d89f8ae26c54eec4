// The other credentials read from files, under the secret file's rules (API.md §9): the webhook secret
// and the database and Redis URLs, which carry passwords, stay out of `ps` and the environment.
import { describe, expect, test } from 'bun:test';
import { RedisClient, SQL } from 'bun';
import { chmodSync, existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresForThisFile } from './support/postgres';
import { redisForThisFile } from './support/redis';
import { runToExit, startServer, tempDirsOfThisFile } from './support/server-process';
import { newWebhookSecret, startReceiver, waitUntil } from './support/webhook-receiver';

const tempDir = tempDirsOfThisFile();
const pg = await postgresForThisFile('credentials from files on PostgreSQL');
const redis = await redisForThisFile('credentials from files with Redis');
const SECRET = 'secret-files-test-secret-0123';

function privateFile(content: string, mode = 0o600): string {
  const path = join(tempDir(), 'credential');
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
  return path;
}

/** Runs `serve` expecting it to refuse: exit 2, one line on stderr, nothing created in the data dir. */
async function expectRefused(args: string[], env: Record<string, string> = {}): Promise<string> {
  const dataDir = join(tempDir(), 'data');
  const result = await runToExit(['serve', '--port', '0', '--pwned-check', 'off', '--secret', SECRET, '--dir', dataDir, ...args], { env });
  expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 2, stdout: '' });
  expect(result.stderr).toMatch(/^gatehouse: [^\n]+\n$/);
  expect(existsSync(dataDir)).toBe(false);
  return result.stderr;
}

const webhookSecret = newWebhookSecret();
const FILES = [
  { flag: 'webhook-secret-file', variable: 'GATEHOUSE_WEBHOOK_SECRET_FILE', content: webhookSecret, needs: ['--webhook-url', 'http://127.0.0.1:9/hooks'] },
  { flag: 'database-url-file', variable: 'GATEHOUSE_DATABASE_URL_FILE', content: 'postgres://gatehouse:db-password-4711@127.0.0.1:9/gatehouse', needs: [] },
  { flag: 'redis-url-file', variable: 'GATEHOUSE_REDIS_URL_FILE', content: 'redis://:redis-password-4711@127.0.0.1:9', needs: [] },
];

describe.each(FILES)('--$flag and $variable: the secret file rules', ({ flag, variable, content, needs }) => {
  test.each([
    ['readable by others', 0o604],
    ['readable by group', 0o640],
    ['readable by everyone', 0o644],
  ])('a file %s is refused, from the flag and the variable, and the message names the file, never its content', async (_, mode) => {
    const path = privateFile(content, mode);
    for (const stderr of [await expectRefused([`--${flag}`, path, ...needs]), await expectRefused(needs, { [variable]: path })]) {
      expect(stderr).toContain(path);
      expect(stderr).toContain('readable by group or others');
      expect(stderr).not.toContain(content);
    }
  });

  test('a symlink (even to a private file), a missing file and a directory are refused', async () => {
    const link = join(tempDir(), 'link');
    symlinkSync(privateFile(content), link);
    expect(await expectRefused([`--${flag}`, link, ...needs])).toContain('symlink');
    expect(await expectRefused([`--${flag}`, join(tempDir(), 'nothing-here'), ...needs])).toContain('does not exist');
    const directory = tempDir();
    chmodSync(directory, 0o700);
    expect(await expectRefused([`--${flag}`, directory, ...needs])).toContain('not a regular file');
  });

  test('the value and the file together are refused, as flags and as variables', async () => {
    const path = privateFile(content);
    const valueFlag = flag.replace(/-file$/, '');
    const valueVariable = variable.replace(/_FILE$/, '');
    expect(await expectRefused([`--${valueFlag}`, content, `--${flag}`, path, ...needs])).toContain(`--${valueFlag} or --${flag}, not both`);
    expect(await expectRefused(needs, { [valueVariable]: content, [variable]: path })).toContain(`${valueVariable} and ${variable} are both set`);
  });
});

describe('what the file holds is checked like the value, and never echoed', () => {
  test('a database URL of another scheme, a Redis URL with spaces and a malformed webhook secret', async () => {
    const database = await expectRefused(['--database-url-file', privateFile('mysql://root:db-password-4711@db/app\n')]);
    expect(database).toContain('invalid --database-url');
    expect(database).not.toContain('db-password-4711');
    expect(await expectRefused(['--redis-url-file', privateFile('redis://:pw 4711@host\n')])).toContain('invalid --redis-url');
    const webhook = await expectRefused(['--webhook-url', 'http://127.0.0.1:9/hooks', '--webhook-secret-file', privateFile('whsec_not-base64!\n')]);
    expect(webhook).toContain('invalid --webhook-secret');
    expect(webhook).not.toContain('not-base64');
  });
});

describe('import and export take --database-url-file and GATEHOUSE_DATABASE_URL_FILE too', () => {
  test('under the same rules', async () => {
    const open = privateFile('postgres://gatehouse:db-password-4711@127.0.0.1:9/gatehouse', 0o644);
    for (const run of [runToExit(['import', '-', '--database-url-file', open]), runToExit(['export', '-'], { env: { GATEHOUSE_DATABASE_URL_FILE: open } })]) {
      const { exitCode, stderr } = await run;
      expect(exitCode).toBe(2);
      expect(stderr).toContain('readable by group or others');
      expect(stderr).not.toContain('db-password-4711');
    }
    const { exitCode, stderr } = await runToExit(['export', '-', '--database-url', 'postgres://h/db', '--database-url-file', privateFile('postgres://h/db')]);
    expect({ exitCode, stderr }).toEqual({ exitCode: 2, stderr: 'gatehouse: give --database-url or --database-url-file, not both\n' });
  });
});

describe('read and used', () => {
  test('--webhook-secret-file and GATEHOUSE_WEBHOOK_SECRET_FILE: events are signed with the secret in the file (trailing newline not part of it)', async () => {
    const receiver = startReceiver(webhookSecret);
    try {
      const path = privateFile(`${webhookSecret}\n`);
      const ways = [{ extraArgs: ['--secret', SECRET, '--webhook-url', receiver.url, '--webhook-secret-file', path] }, { extraArgs: ['--secret', SECRET], env: { GATEHOUSE_WEBHOOK_URL: receiver.url, GATEHOUSE_WEBHOOK_SECRET_FILE: path } }];
      for (const [i, way] of ways.entries()) {
        const server = await startServer({ dir: tempDir(), ...way });
        expect((await server.request('POST', '/users', { password: 'a long enough password 1' })).status).toBe(200);
        await waitUntil(() => receiver.deliveries.length === i + 1, 10_000, 'a delivery');
        expect(receiver.deliveries[i]!.verified.ok).toBe(true);
        expect(await server.stop()).toBe(0);
      }
    } finally {
      receiver.stop();
    }
  }, 60_000);

  test.skipIf(pg.skip || redis.skip)('--database-url-file and --redis-url-file: the server keeps its users in that PostgreSQL and its limits in that Redis', async () => {
    const { url } = await pg.server().createDatabase();
    await redis.server().flush();
    const server = await startServer({
      dir: tempDir(),
      extraArgs: ['--secret', SECRET, '--database-url-file', privateFile(`${url}\n`), '--redis-url-file', privateFile(`${redis.server().url}\n`)],
    });
    const user = (await (await server.request('POST', '/users', { password: 'a long enough password 1', client_ip: '198.51.100.7' })).json()) as { id: string };
    const client = new SQL({ url, max: 1 });
    expect(await client`SELECT id FROM users`).toEqual([{ id: user.id }]);
    await client.close();
    const keys = new RedisClient(redis.server().url);
    expect(Number(await keys.send('DBSIZE', []))).toBeGreaterThan(0);
    keys.close();
    expect(server.lines.some((line) => String(line.message).includes('no --redis-url'))).toBe(false);
    expect(await server.stop()).toBe(0);
    const exported = await runToExit(['export', '-'], { env: { GATEHOUSE_DATABASE_URL_FILE: privateFile(url) } });
    expect(exported.exitCode).toBe(0);
    expect(JSON.parse(exported.stdout).id).toBe(user.id);
  }, 60_000);
});

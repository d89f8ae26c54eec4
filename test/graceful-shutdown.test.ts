import { describe, expect, test } from 'bun:test';
import { openDatabase } from '../src/db/client';
import { startServer, tempDirsOfThisFile } from './support/server-process';

const SECRET = 'graceful-shutdown-secret-42';
const PASSWORD = 'a slow password to check';
const USER_ID = 'slowhashuser2345678abcde';
const CHECKS = 8;

const tempDir = tempDirsOfThisFile();

/**
 * A user whose stored hash has a high argon2 time cost: verification uses the hash's own
 * parameters, so every check of this user stays in flight for a good while.
 */
async function directoryWithSlowUser(): Promise<string> {
  const dir = tempDir();
  const db = openDatabase(dir);
  const slowHash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 40 });
  db.$client
    .query('insert into users (id, created_at, email, email_verified, password_hash, recovery_code_hash) values (?, ?, null, 0, ?, ?)')
    .run(USER_ID, Math.floor(Date.now() / 1000), slowHash, slowHash);
  db.$client.close();
  return dir;
}

describe('graceful shutdown', () => {
  test('SIGTERM lets several password checks in flight finish with their normal answers, refuses new connections, exits 0', async () => {
    const server = await startServer({ dir: await directoryWithSlowUser(), extraArgs: ['--secret', SECRET] });

    const checks = Array.from({ length: CHECKS }, async (_, i) => {
      const right = i % 2 === 0;
      const response = await fetch(`${server.url}/users/${USER_ID}/verify-password`, {
        method: 'POST',
        headers: { authorization: SECRET },
        body: JSON.stringify({ password: right ? PASSWORD : `${PASSWORD} but wrong` }),
      });
      return { right, status: response.status, text: await response.text(), answeredAt: Date.now() };
    });
    let settled = 0;
    for (const check of checks) void check.finally(() => settled++);

    // Loopback connections are accepted within milliseconds; each check then takes far longer than this.
    await Bun.sleep(400);
    expect(settled).toBe(0);
    const signalledAt = Date.now();
    const exited = server.stop('SIGTERM');

    let refusedWhileDraining = false;
    while (settled < CHECKS && !refusedWhileDraining) {
      refusedWhileDraining = await fetch(`${server.url}/health`, { headers: { connection: 'close' } }).then(
        () => false,
        () => settled < CHECKS,
      );
      if (!refusedWhileDraining) await Bun.sleep(20);
    }
    expect(refusedWhileDraining).toBe(true);

    const answers = await Promise.all(checks);
    for (const answer of answers) {
      expect(answer.answeredAt).toBeGreaterThanOrEqual(signalledAt);
      if (answer.right) expect([answer.status, answer.text]).toEqual([204, '']);
      else expect([answer.status, JSON.parse(answer.text)]).toEqual([400, { error: 'INCORRECT_PASSWORD' }]);
    }
    expect(await exited).toBe(0);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();

    // Every answered check made it into the access log before the process exited.
    const logged = server.lines.filter((line) => line.path === `/users/${USER_ID}/verify-password`).map((line) => line.status);
    expect(logged.sort()).toEqual([...Array(CHECKS / 2).fill(204), ...Array(CHECKS / 2).fill(400)]);
  }, 30_000);
});

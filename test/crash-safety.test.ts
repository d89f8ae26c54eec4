import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseServeConfig } from '../src/cli/config';
import { serve } from '../src/cli/serve';
import { silentLogger } from '../src/http/log';
import { type ServerProcess, startServer, tempDirsOfThisFile } from './support/server-process';

const SECRET = 'crash-safety-secret-0123';
const WORKERS = 6;
/** Load runs at least this long and until every worker has a user and enough writes were acknowledged, but never longer than the cap. */
const MIN_LOAD_MS = 1_200;
const MIN_ACKED_WRITES = 20;
const MAX_LOAD_MS = 8_000;

const tempDir = tempDirsOfThisFile();

/** What the client knows about one user after the crash: only acknowledged (2xx) writes count. */
interface TrackedUser {
  id: string;
  email: string;
  /** The password of the last acknowledged change (or creation). */
  password: string;
  /** A change that was sent but never answered: after the crash either password may hold. */
  unansweredPassword: string | null;
  /** A reset-password was acknowledged, so email_verified must be true. */
  resetAcknowledged: boolean;
  /** Reset requests whose creation was acknowledged and which no reset-password tried to redeem. */
  openResetRequests: string[];
}

class ServerGone extends Error {}

/** One request; a dropped connection (the kill) becomes ServerGone, any other non-2xx is recorded. */
function client(server: ServerProcess, unexpected: string[]) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: SECRET },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      text = await response.text();
    } catch {
      throw new ServerGone();
    }
    if (response.status >= 300) {
      unexpected.push(`${method} ${path} → ${response.status} ${text}`);
      throw new ServerGone(); // stop this worker; the assertion on `unexpected` reports it
    }
    return text === '' ? undefined : JSON.parse(text);
  };
}

/** Each worker owns the users it creates, so for each user the order of its changes is known. */
async function runWorker(worker: number, call: ReturnType<typeof client>, users: TrackedUser[], shouldStop: () => boolean, acked: () => void) {
  let serial = 0;
  const nextPassword = () => `crash test ${worker}-${serial++} ${crypto.randomUUID()}`;

  const changePassword = async (user: TrackedUser, send: (password: string) => Promise<unknown>) => {
    const password = nextPassword();
    user.unansweredPassword = password;
    await send(password);
    user.password = password;
    user.unansweredPassword = null;
    acked();
  };

  try {
    for (let n = 0; !shouldStop(); n++) {
      const email = `worker${worker}.user${n}@crash.example`;
      const password = nextPassword();
      const created = await call('POST', '/users', { password, email });
      const user: TrackedUser = { id: created.id, email, password, unansweredPassword: null, resetAcknowledged: false, openResetRequests: [] };
      users.push(user);
      acked();

      await changePassword(user, (next) => call('POST', `/users/${user.id}/update-password`, { password: user.password, new_password: next }));

      const resetRequest = await call('POST', `/users/${user.id}/password-reset-requests`, {});
      user.openResetRequests.push(resetRequest.id);
      acked();
      await call('POST', `/password-reset-requests/${resetRequest.id}/verify-email`, { code: resetRequest.code });
      acked();
      user.openResetRequests = user.openResetRequests.filter((id) => id !== resetRequest.id);
      await changePassword(user, (next) => call('POST', '/reset-password', { request_id: resetRequest.id, password: next }));
      user.resetAcknowledged = true;

      // A second request left open, to be found after the restart.
      const leftOpen = await call('POST', `/users/${user.id}/password-reset-requests`, {});
      user.openResetRequests.push(leftOpen.id);
      acked();

      await changePassword(user, (next) => call('POST', `/users/${user.id}/update-password`, { password: user.password, new_password: next }));
    }
  } catch (error) {
    if (!(error instanceof ServerGone)) throw error;
  }
}

describe('crash safety', () => {
  test('the running server commits with synchronous=FULL in WAL mode', async () => {
    const dir = tempDir();
    const { stop, sqlite: db } = await serve(parseServeConfig(['--port', '0', '--dir', dir, '--secret', SECRET, '--pwned-check', 'off'], {}), silentLogger);
    try {
      const pragma = (name: string) => Object.values(db!.$client.query(`pragma ${name}`).get() as Record<string, unknown>)[0];
      expect(pragma('synchronous')).toBe(2);
      expect(pragma('journal_mode')).toBe('wal');
    } finally {
      await stop();
    }
  });

  test('after SIGKILL under concurrent load, every acknowledged write survives a restart and the database is intact', async () => {
    const dir = tempDir();
    const first = await startServer({ dir, extraArgs: ['--secret', SECRET] });
    const unexpected: string[] = [];
    const users: TrackedUser[] = [];
    let ackedWrites = 0;
    let killed = false;

    const call = client(first, unexpected);
    const started = Date.now();
    const workers = Array.from({ length: WORKERS }, (_, worker) =>
      runWorker(worker, call, users, () => killed, () => ackedWrites++),
    );
    const enoughLoad = () => Date.now() - started >= MIN_LOAD_MS && ackedWrites >= MIN_ACKED_WRITES && users.length >= WORKERS;
    while (Date.now() - started < MAX_LOAD_MS && !enoughLoad()) {
      await Bun.sleep(25);
    }
    // Killed mid-run: the workers still have requests in flight.
    expect(await first.stop('SIGKILL')).not.toBe(0);
    killed = true;
    await Promise.all(workers);

    expect(unexpected).toEqual([]);
    expect(ackedWrites).toBeGreaterThanOrEqual(MIN_ACKED_WRITES);
    expect(users.length).toBeGreaterThanOrEqual(WORKERS);
    // The crash left a write-ahead log behind, so the restart has to recover from it.
    expect(existsSync(join(dir, 'gatehouse.db-wal'))).toBe(true);

    const second = await startServer({ dir, extraArgs: ['--secret', SECRET] });
    const listed = await second.request('GET', '/users?per_page=1');
    expect(Number(listed.headers.get('x-pagination-total'))).toBeGreaterThanOrEqual(users.length);

    const failures: string[] = [];
    await Promise.all(
      users.map(async (user) => {
        const found = await second.request('GET', `/users/${user.id}`);
        const body = (await found.json()) as { email?: string; email_verified?: boolean };
        if (found.status !== 200 || body.email !== user.email) failures.push(`${user.id}: ${found.status} ${JSON.stringify(body)}`);
        if (user.resetAcknowledged && body.email_verified !== true) failures.push(`${user.id}: reset acknowledged but email not verified`);

        const candidates = user.unansweredPassword === null ? [user.password] : [user.password, user.unansweredPassword];
        let verified = false;
        for (const password of candidates) {
          const check = await second.request('POST', `/users/${user.id}/verify-password`, { password });
          if (check.status === 204) verified = true;
          else if (check.status !== 400) failures.push(`${user.id}: verify-password ${check.status}`);
        }
        if (!verified) failures.push(`${user.id}: no acknowledged password verifies`);

        for (const requestId of user.openResetRequests) {
          const request = await second.request('GET', `/password-reset-requests/${requestId}`);
          if (request.status !== 200) failures.push(`${user.id}: reset request ${requestId} → ${request.status}`);
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(await second.stop('SIGTERM')).toBe(0);

    const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    try {
      expect(db.query('pragma integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      expect(db.query('pragma foreign_key_check').all()).toEqual([]);
      const stored = db.query('select count(*) as n from users').get() as { n: number };
      expect(stored.n).toBeGreaterThanOrEqual(users.length);
    } finally {
      db.close();
    }
  }, 60_000);
});

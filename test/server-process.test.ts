import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startFakePwnedServer } from './support/fake-pwned-server';
import { STRONG_PASSWORD } from './support/harness';
import { startServer, tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('the serve process', () => {
  test('first start creates a 0600 secret file, serves over a socket, persists data across a restart', async () => {
    const dir = join(tempDir(), 'fresh');
    const first = await startServer({ dir });

    const secretPath = join(dir, 'secret');
    const secretFile = readFileSync(secretPath, 'utf8').trim();
    expect(first.secret).toBe(secretFile);
    expect(secretFile).toMatch(/^[abcdefghijkmnpqrstuvwxyz23456789]{40}$/);
    expect(modeOf(secretPath)).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
    const announcement = first.lines.find((line) => String(line.message).includes(secretPath));
    expect(announcement?.message).toBe(`generated a new secret in ${secretPath}`);

    // Over the socket: the credential, create, list, verify.
    expect((await fetch(`${first.url}/users`)).status).toBe(401);
    expect(await (await fetch(`${first.url}/users`, { headers: { authorization: 'wrong' } })).json()).toEqual({ error: 'NOT_AUTHENTICATED' });
    expect(await (await fetch(`${first.url}/health`)).json()).toEqual({ status: 'ok' });
    const created = await first.request('POST', '/users', { password: STRONG_PASSWORD, email: 'Proc@Example.com' });
    expect(created.status).toBe(200);
    const user = (await created.json()) as { id: string; email: string; recovery_code: string };
    expect(user.email).toBe('proc@example.com');
    const list = await first.request('GET', '/users');
    expect(list.headers.get('x-pagination-total')).toBe('1');
    expect(((await list.json()) as { id: string }[]).map((u) => u.id)).toEqual([user.id]);
    const verified = await first.request('POST', `/users/${user.id}/verify-password`, { password: STRONG_PASSWORD });
    expect(verified.status).toBe(204);
    const tooBig = await first.request('POST', '/users', { password: STRONG_PASSWORD, padding: 'x'.repeat(70_000) });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toEqual({ error: 'PAYLOAD_TOO_LARGE' });

    const dbPath = join(dir, 'gatehouse.db');
    expect(modeOf(dbPath)).toBe(0o600);
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(dbPath + suffix)) expect(modeOf(dbPath + suffix)).toBe(0o600);
    }

    // The log never holds the secret, the password, the recovery code or the email.
    expect(await first.stop('SIGTERM')).toBe(0);
    const log = JSON.stringify(first.lines);
    for (const sensitive of [secretFile, STRONG_PASSWORD, user.recovery_code, 'proc@example.com']) expect(log).not.toContain(sensitive);
    expect(first.lines.filter((line) => line.method !== undefined).map((line) => [line.method, line.path, line.status])).toEqual([
      ['GET', '/users', 401],
      ['GET', '/users', 401],
      ['GET', '/health', 200],
      ['POST', '/users', 200],
      ['GET', '/users', 200],
      ['POST', `/users/${user.id}/verify-password`, 204],
      ['POST', '/users', 413],
    ]);

    const second = await startServer({ dir });
    expect(second.secret).toBe(secretFile);
    expect(second.lines.some((line) => line.message === `using the secret in ${secretPath}`)).toBe(true);
    const found = await second.request('GET', `/users/${user.id}`);
    expect(await found.json()).toMatchObject({ id: user.id, email: 'proc@example.com' });
    expect((await second.request('POST', `/users/${user.id}/verify-password`, { password: STRONG_PASSWORD })).status).toBe(204);
    expect(await second.stop('SIGINT')).toBe(0);
  });

  test('online mode asks the range API given by --pwned-api-url; SIGTERM lets a request in flight finish', async () => {
    const breached = 'a password from some leak 42';
    const pwned = startFakePwnedServer({ breached: [breached] });
    try {
      const server = await startServer({ extraArgs: ['--pwned-check', 'online', '--pwned-api-url', pwned.url, '--secret', 'process-test-secret'] });
      const weak = await server.request('POST', '/users', { password: breached });
      expect(weak.status).toBe(400);
      expect(await weak.json()).toEqual({ error: 'WEAK_PASSWORD' });
      expect(pwned.requests).toHaveLength(1);
      expect(pwned.requests[0]?.addPadding).toBe('true');
      expect(pwned.requests[0]?.path).toMatch(/^\/range\/[0-9A-F]{5}$/);

      // A slow range answer keeps the next create in flight while the signal arrives.
      pwned.options.delayMs = 1_500;
      const inFlight = server.request('POST', '/users', { password: STRONG_PASSWORD });
      while (pwned.requests.length < 2) await Bun.sleep(10);
      const exited = server.stop('SIGTERM');
      let settled = false;
      void inFlight.finally(() => (settled = true));
      // New connections are refused while the request in flight is still being served.
      let refusedWhileDraining = false;
      while (!settled && !refusedWhileDraining) {
        refusedWhileDraining = await fetch(`${server.url}/health`, { headers: { connection: 'close' } }).then(() => false, () => !settled);
        await Bun.sleep(20);
      }
      expect(refusedWhileDraining).toBe(true);
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: string }).id).toMatch(/^[a-z2-9]{24}$/);
      expect(await exited).toBe(0);
      await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    } finally {
      pwned.stop();
    }
  });

  test('the data persisted before SIGTERM survives it', async () => {
    const dir = tempDir();
    const first = await startServer({ dir, extraArgs: ['--secret', 'persist-secret-0123456789'] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await first.request('POST', '/users', { password: STRONG_PASSWORD })).json()) as { id: string }).id);
    const deleted = await first.request('DELETE', `/users/${ids[0]}`);
    expect(deleted.status).toBe(204);
    expect(await first.stop()).toBe(0);
    const second = await startServer({ dir, extraArgs: ['--secret', 'persist-secret-0123456789'] });
    const list = await second.request('GET', '/users?sort_by=id');
    expect(list.headers.get('x-pagination-total')).toBe('2');
    expect(((await list.json()) as { id: string }[]).map((u) => u.id)).toEqual(ids.slice(1).sort());
    expect(await second.stop()).toBe(0);
  });

  test('a body far over the limit still gets our answers: 401 without the credential, 413 with it', async () => {
    const server = await startServer({ dir: tempDir(), extraArgs: ['--secret', 'big-body-secret-0123456789'] });
    const body = new Uint8Array(17 * 1024 * 1024);
    const anonymous = await fetch(`${server.url}/users`, { method: 'POST', body });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ error: 'NOT_AUTHENTICATED' });
    const authorized = await fetch(`${server.url}/users`, { method: 'POST', body, headers: { authorization: server.secret } });
    expect(authorized.status).toBe(413);
    expect(await authorized.json()).toEqual({ error: 'PAYLOAD_TOO_LARGE' });
    expect(await server.stop()).toBe(0);
  });
});

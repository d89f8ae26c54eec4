import { describe, expect, test } from 'bun:test';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { type ServerProcess, SOURCE_COMMAND, startServer, tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Everything the flow sends or receives that must never reach a log line. */
class Sensitive {
  readonly values = new Set<string>();
  /** Six-digit TOTP codes are matched only as whole numbers, so that a timestamp cannot look like one. */
  readonly totpCodes = new Set<string>();
  requests = 0;
  add<T extends string>(value: T): T {
    this.values.add(value);
    return value;
  }
}

function totpCode(key: Uint8Array, timestampMs: number): string {
  return new TOTP({ secret: new Secret({ buffer: key.slice().buffer }), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: timestampMs });
}

/** A code of the right format that differs from every given one. */
function wrongCode(length: number, alphabet: string, avoid: string[]): string {
  for (const char of alphabet) {
    const candidate = char.repeat(length);
    if (!avoid.includes(candidate)) return candidate;
  }
  throw new Error('unreachable');
}
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

async function expectStatus(response: Promise<Response>, status: number, error?: string): Promise<any> {
  const res = await response;
  const text = await res.text();
  const body = text === '' ? undefined : JSON.parse(text);
  expect([res.status, error === undefined ? undefined : body?.error]).toEqual([status, error]);
  return body;
}

/** Every flow of the service, with failures along the way, recording each secret it meets. */
async function runFullFlow(server: ServerProcess, secrets: Sensitive) {
  const call = (method: string, path: string, body?: unknown) => {
    secrets.requests++;
    return server.request(method, path, body);
  };
  const unauthenticated = (path: string, init: RequestInit) => {
    secrets.requests++;
    return fetch(`${server.url}${path}`, init);
  };
  const first = secrets.add('first Passw0rd of the secret test');
  const email = secrets.add('Zqx.Secret.Person@Example.com');
  secrets.add(email.toLowerCase());
  const clientIp = '198.51.100.23';

  const user = await expectStatus(call('POST', '/users', { password: first, email, client_ip: clientIp }), 200);
  secrets.add(user.recovery_code);
  const id = user.id as string;

  // Passwords: authenticate, verify, update, each also with a wrong password.
  const wrong = secrets.add('not the right password at all');
  await expectStatus(call('POST', '/authenticate/password', { email, password: first, client_ip: clientIp }), 200);
  await expectStatus(call('POST', '/authenticate/password', { email, password: wrong }), 400, 'INCORRECT_PASSWORD');
  await expectStatus(call('POST', '/authenticate/password', { email: secrets.add('nobody.zqx@example.com'), password: wrong }), 404, 'NOT_FOUND');
  await expectStatus(call('POST', `/users/${id}/verify-password`, { password: first }), 204);
  await expectStatus(call('POST', `/users/${id}/verify-password`, { password: wrong, client_ip: clientIp }), 400, 'INCORRECT_PASSWORD');
  const second = secrets.add('second passphrase after update');
  await expectStatus(call('POST', `/users/${id}/update-password`, { password: first, new_password: second }), 204);
  await expectStatus(call('POST', `/users/${id}/update-password`, { password: second, new_password: secrets.add('password123') }), 400, 'WEAK_PASSWORD');
  await expectStatus(call('POST', '/users', { password: secrets.add('x'.repeat(128)) }), 400, 'INVALID_DATA');

  // Password reset: wrong code, right code, reset.
  const reset = await expectStatus(call('POST', `/users/${id}/password-reset-requests`, { client_ip: clientIp }), 200);
  secrets.add(reset.code);
  secrets.add(new Bun.CryptoHasher('sha256').update(reset.code).digest('hex'));
  await expectStatus(call('POST', `/password-reset-requests/${reset.id}/verify-email`, { code: wrongCode(8, CODE_ALPHABET, [reset.code]) }), 400, 'INCORRECT_CODE');
  await expectStatus(call('POST', `/password-reset-requests/${reset.id}/verify-email`, { code: reset.code.toLowerCase() }), 204);
  const third = secrets.add('third passphrase from a reset');
  await expectStatus(call('POST', '/reset-password', { request_id: reset.id, password: third, client_ip: clientIp }), 204);

  // Email verification.
  const verification = await expectStatus(call('POST', `/users/${id}/email-verification-request`), 200);
  secrets.add(verification.code);
  expect((await expectStatus(call('GET', `/users/${id}/email-verification-request`), 200)).code).toBe(verification.code);
  await expectStatus(call('POST', `/users/${id}/verify-email`, { code: wrongCode(8, CODE_ALPHABET, [verification.code]) }), 400, 'INCORRECT_CODE');
  await expectStatus(call('POST', `/users/${id}/verify-email`, { code: verification.code }), 204);

  // Email update.
  const newEmail = secrets.add('zqx.moved.person@example.org');
  const update = await expectStatus(call('POST', `/users/${id}/email-update-requests`, { email: newEmail }), 200);
  secrets.add(update.code);
  await expectStatus(call('GET', `/email-update-requests/${update.id}`), 200);
  await expectStatus(call('GET', `/users/${id}/email-update-requests`), 200);
  await expectStatus(call('POST', '/verify-new-email', { request_id: update.id, code: wrongCode(8, CODE_ALPHABET, [update.code]) }), 400, 'INCORRECT_CODE');
  expect(await expectStatus(call('POST', '/verify-new-email', { request_id: update.id, code: update.code }), 200)).toEqual({ email: newEmail });
  const queryFragment = secrets.add('zqx.moved');
  await expectStatus(call('GET', `/users?email_query=${encodeURIComponent(queryFragment)}`), 200);

  // TOTP: the key in base64, hex and base32; register with this step's code, verify with the next.
  const key = crypto.getRandomValues(new Uint8Array(20));
  const keyBase64 = secrets.add(Buffer.from(key).toString('base64'));
  secrets.add(Buffer.from(key).toString('hex'));
  secrets.add(Buffer.from(key).toString('hex').toUpperCase());
  secrets.add(new Secret({ buffer: key.slice().buffer }).base32);
  const now = Date.now();
  const codes = [-30_000, 0, 30_000, 60_000].map((offset) => totpCode(key, now + offset));
  for (const code of codes) secrets.totpCodes.add(code);
  const badTotp = wrongCode(6, '0123456789', codes);
  await expectStatus(call('POST', `/users/${id}/register-totp`, { key: keyBase64, code: badTotp }), 400, 'INCORRECT_CODE');
  expect((await expectStatus(call('POST', `/users/${id}/register-totp`, { key: keyBase64, code: codes[1] }), 200)).key).toBe(keyBase64);
  expect((await expectStatus(call('GET', `/users/${id}/totp-credential`), 200)).key).toBe(keyBase64);
  await expectStatus(call('POST', `/users/${id}/verify-2fa/totp`, { code: badTotp }), 400, 'INCORRECT_CODE');
  await expectStatus(call('POST', `/users/${id}/verify-2fa/totp`, { code: codes[2] }), 204);

  // Recovery codes: regenerate, a wrong one, then reset-2fa with the right one.
  const regenerated = await expectStatus(call('POST', `/users/${id}/regenerate-recovery-code`), 200);
  secrets.add(regenerated.recovery_code);
  await expectStatus(call('POST', `/users/${id}/reset-2fa`, { recovery_code: user.recovery_code }), 400, 'INCORRECT_CODE');
  const afterReset = await expectStatus(call('POST', `/users/${id}/reset-2fa`, { recovery_code: regenerated.recovery_code.toLowerCase() }), 200);
  secrets.add(afterReset.recovery_code);
  await expectStatus(call('GET', `/users/${id}/totp-credential`), 404, 'NOT_FOUND');

  // The wrong credential, with a body full of secrets.
  const wrongSecret = secrets.add('a-wrong-secret-for-the-test-zqx');
  const rejected = await unauthenticated('/users', {
    method: 'POST',
    headers: { authorization: wrongSecret },
    body: JSON.stringify({ password: first, email }),
  });
  expect(rejected.status).toBe(401);
  expect((await unauthenticated(`/users/${id}`, { headers: { authorization: `Bearer ${server.secret}` } })).status).toBe(401);

  // The final state, as a check that the flow really ran.
  expect(await expectStatus(call('GET', `/users/${id}`), 200)).toMatchObject({ email: newEmail, email_verified: true, registered_totp: false });
  await expectStatus(call('POST', `/users/${id}/verify-password`, { password: third }), 204);
}

describe('secrets stay out of logs and files stay private', () => {
  test('a full flow logs no password, code, recovery code, TOTP key, email or secret; every file is 0600 even under umask 000', async () => {
    const dir = join(tempDir(), 'data');
    // The server is started through a shell with umask 000, so the modes come from the code, not the umask.
    const server = await startServer({ dir, command: ['sh', '-c', 'umask 000 && exec "$@"', 'gatehouse', ...SOURCE_COMMAND] });
    const secrets = new Sensitive();
    secrets.add(server.secret);

    await runFullFlow(server, secrets);

    const dbPath = join(dir, 'gatehouse.db');
    const privateFiles = [join(dir, 'secret'), dbPath, `${dbPath}-wal`, `${dbPath}-shm`];
    expect(existsSync(`${dbPath}-wal`)).toBe(true);
    expect(modeOf(dir)).toBe(0o700);
    for (const path of privateFiles) expect([path, modeOf(path)]).toEqual([path, 0o600]);

    expect(await server.stop('SIGTERM')).toBe(0);
    for (const path of privateFiles.filter(existsSync)) expect([path, modeOf(path)]).toEqual([path, 0o600]);

    // One access-log line per request came out, so the log really was on.
    expect(server.lines.filter((line) => line.method !== undefined).length).toBe(secrets.requests);
    const log = [...server.lines.map((line) => JSON.stringify(line)), ...server.stderr().split('\n')];
    const leaks: string[] = [];
    for (const line of log) {
      const lower = line.toLowerCase();
      for (const value of secrets.values) if (lower.includes(value.toLowerCase())) leaks.push(`${value} in ${line}`);
      for (const code of secrets.totpCodes) if (new RegExp(`(?<![0-9])${code}(?![0-9])`).test(line)) leaks.push(`${code} in ${line}`);
      if (line.includes('$argon2')) leaks.push(`a password hash in ${line}`);
    }
    expect(leaks).toEqual([]);
  }, 30_000);
});

import { writeFileSync } from 'node:fs';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { openDatabase } from '../../src/db/client';
import { generateId } from '../../src/security/random';
import { SoftAuthenticator } from '../support/soft-authenticator';

/**
 * The passkey login scenario (issue 16): each POST /authenticate/passkey needs its own single-use
 * challenge and a fresh signature, so the bench seeds challenges straight into the database (like the
 * users) and signs one assertion per challenge in this process; wrk then sends each body once.
 */
const ORIGIN = 'http://localhost';
export const WEBAUTHN_FLAGS = ['--webauthn-rp-id', 'localhost', '--webauthn-origin', ORIGIN];

/**
 * Registers a passkey for the user through the API. Its sign counter stays 0, like a synced
 * passkey's: with an increasing counter, parallel logins arriving out of order would be refused.
 */
export async function registerPasskey(baseUrl: string, secret: string, userId: string): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, counter: 'zero' });
  const post = async (path: string, body: unknown) => {
    const reply = await fetch(baseUrl + path, { method: 'POST', headers: { authorization: secret }, body: JSON.stringify(body) });
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${await reply.text()}`);
    return reply.json() as Promise<any>;
  };
  const { challenge_id, options } = await post(`/users/${userId}/passkey-registration-options`, {});
  await post(`/users/${userId}/passkeys`, { challenge_id, response: await authenticator.register(options) });
  return authenticator;
}

/** Inserts `count` live login challenges in one transaction and writes one signed login body per challenge to `file`. */
export async function writeLoginBodies(dir: string, authenticator: SoftAuthenticator, count: number, file: string): Promise<void> {
  const challenges = Array.from({ length: count }, () => ({
    id: generateId(),
    challenge: isoBase64URL.fromBuffer(crypto.getRandomValues(new Uint8Array(32))),
  }));
  const db = openDatabase(dir);
  const insert = db.$client.prepare(
    "insert into challenges (id, ceremony, purpose, user_id, challenge, user_verification, expires_at) values (?, 'authentication', 'login', null, ?, 'required', ?)",
  );
  const expiresAt = Math.floor(Date.now() / 1000) + 300;
  db.$client.transaction(() => {
    for (const { id, challenge } of challenges) insert.run(id, challenge, expiresAt);
  })();
  db.$client.close();
  const lines: string[] = [];
  for (const { id, challenge } of challenges) {
    const response = await authenticator.authenticate({ challenge, rpId: 'localhost', allowCredentials: [] });
    lines.push(JSON.stringify({ challenge_id: id, response }));
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

import type { RelyingParty } from '../../src/passkeys/webauthn/ceremonies';
import { createHarness, type Harness } from './harness';
import { rowOf, snapshot } from './rows';
import { SoftAuthenticator, type CeremonyKnobs, type SoftAuthenticatorSettings } from './soft-authenticator';

/** Helpers for passkey tests over HTTP with the software authenticator (API.md §13). */
export const ORIGIN = 'https://example.com';
export const RP: RelyingParty = { id: 'example.com', name: 'Example', origins: [ORIGIN, 'https://login.example.com'] };

export const passkeyHarness = (options: Parameters<typeof createHarness>[0] = {}) => createHarness({ relyingParty: RP, ...options });

export const softAuthenticator = (settings: Partial<SoftAuthenticatorSettings> = {}) => new SoftAuthenticator({ origin: ORIGIN, ...settings });

async function expectOk(res: { status: number; text: string }, what: string) {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
}

export async function registrationOptions(h: Harness, userId: string, body: Record<string, unknown> = {}) {
  const res = await h.call('POST', `/users/${userId}/passkey-registration-options`, { body });
  await expectOk(res, 'registration options');
  return res.json as { challenge_id: string; options: any };
}

/** Options, the authenticator's answer and the verify call; answers the verify call's result as is. */
export async function register(
  h: Harness,
  userId: string,
  authenticator: SoftAuthenticator,
  extra: { knobs?: CeremonyKnobs; name?: string; userVerification?: 'required' | 'preferred' } = {},
) {
  const { challenge_id, options } = await registrationOptions(h, userId, extra.userVerification ? { user_verification: extra.userVerification } : {});
  const response = await authenticator.register(options, extra.knobs);
  return h.call('POST', `/users/${userId}/passkeys`, { body: { challenge_id, response, ...(extra.name === undefined ? {} : { name: extra.name }) } });
}

/** Registers and answers the new passkey; throws unless it worked. */
export async function registered(h: Harness, userId: string, authenticator: SoftAuthenticator, extra: Parameters<typeof register>[3] = {}) {
  const res = await register(h, userId, authenticator, extra);
  await expectOk(res, 'registration');
  return res.json as { id: string; name: string; user_id: string };
}

export async function authenticationOptions(h: Harness, body: Record<string, unknown> = {}) {
  const res = await h.call('POST', '/passkey-authentication-options', { body });
  await expectOk(res, 'authentication options');
  return res.json as { challenge_id: string; options: any };
}

/** A passwordless login: options (for `userId` when given), the assertion, the verify call. */
export async function login(h: Harness, authenticator: SoftAuthenticator, extra: { userId?: string; knobs?: CeremonyKnobs; clientIp?: string } = {}) {
  const ip = extra.clientIp === undefined ? {} : { client_ip: extra.clientIp };
  const { challenge_id, options } = await authenticationOptions(h, { ...(extra.userId ? { user_id: extra.userId } : {}), ...ip });
  const response = await authenticator.authenticate(options, extra.knobs);
  return h.call('POST', '/authenticate/passkey', { body: { challenge_id, response, ...ip } });
}

/** The passkey as a second factor for `userId`. */
export async function secondFactor(h: Harness, userId: string, authenticator: SoftAuthenticator, knobs?: CeremonyKnobs) {
  const { challenge_id, options } = await authenticationOptions(h, { user_id: userId, purpose: 'second_factor' });
  const response = await authenticator.authenticate(options, knobs);
  return h.call('POST', `/users/${userId}/verify-2fa/passkey`, { body: { challenge_id, response } });
}

/** Every table's rows, to prove a refused request changed nothing. */
export const tables = (h: Harness, except: string[] = []) => snapshot(h, except);

export const challengeExists = async (h: Harness, id: string): Promise<boolean> => (await rowOf(h, 'challenges', { id })) !== undefined;

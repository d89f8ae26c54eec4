import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import type { RelyingParty } from '../../src/passkeys/webauthn/ceremonies';
import { verifyRegistration } from '../../src/passkeys/webauthn/ceremonies';
import { SoftAuthenticator } from '../support/soft-authenticator';

/**
 * The passkey part of the fuzz seed (API.md §13): one passkey, live challenges of every binding, and
 * answers made for them by the software authenticator, so near-valid bodies can reach each success;
 * plus hostile `response` objects. The seed is restored before every case, so the answers stay valid.
 */
export const FUZZ_RP: RelyingParty = { id: 'example.com', name: 'Fuzz', origins: ['https://example.com'] };

const challengeOf = (n: number) => isoBase64URL.fromBuffer(new Uint8Array(32).fill(n));
const id = (name: string) => `${name}${'2'.repeat(24)}`.slice(0, 24);
const creation = (userId: string, challenge: string) => ({
  rp: { id: FUZZ_RP.id, name: FUZZ_RP.name },
  user: { id: isoBase64URL.fromUTF8String(userId), name: userId, displayName: userId },
  challenge,
  pubKeyCredParams: [{ type: 'public-key' as const, alg: -7 }],
});
const request = (challenge: string) => ({ challenge, rpId: FUZZ_RP.id, allowCredentials: [] });

/** `owner` holds the seeded passkey; `newcomer` has none and may register one. */
export async function seedPasskeys(users: { owner: string; newcomer: string }, nowSeconds: number) {
  const held = new SoftAuthenticator({ origin: FUZZ_RP.origins[0]! });
  const seeded = await held.register(creation(users.owner, challengeOf(0)));
  const verdict = await verifyRegistration(FUZZ_RP, { challenge: challengeOf(0), userVerification: 'preferred' }, seeded);
  if (!verdict.ok) throw new Error(`seed passkey: ${verdict.reason}`);

  const ids = {
    passkey: id('fzpasskey'),
    registration: id('fzchalreg'),
    registrationTaken: id('fzchaltaken'),
    login: id('fzchalwogin'),
    secondFactor: id('fzchalsecond'),
    expired: id('fzchalexp'),
  };
  const answers = {
    registration: await new SoftAuthenticator({ origin: FUZZ_RP.origins[0]! }).register(creation(users.newcomer, challengeOf(1))),
    /** The seeded credential again: PASSKEY_ALREADY_REGISTERED. */
    // For the same challenge as `registration`, so either answer to it reaches its outcome.
    registrationTaken: await held.register(creation(users.newcomer, challengeOf(1)), { credentialId: seeded.id }),
    login: await held.authenticate(request(challengeOf(3))),
    secondFactor: await held.authenticate(request(challengeOf(4))),
  };
  const live = nowSeconds + 240;
  const challenge = (cid: string, ceremony: string, purpose: string | null, userId: string | null, n: number, expiresAt = live) => ({
    id: cid, ceremony, purpose, user_id: userId, challenge: challengeOf(n), user_verification: 'preferred', expires_at: expiresAt,
  });
  const rows = {
    passkeys: [{
      id: ids.passkey, user_id: users.owner, credential_id: verdict.value.id, public_key: verdict.value.publicKey, counter: 0,
      transports: 'internal', backed_up: 0, name: 'Seeded', created_at: nowSeconds - 60, last_used_at: null,
    }],
    challenges: [
      challenge(ids.registration, 'registration', null, users.newcomer, 1),
      // For the newcomer too: the seeded credential registered again by someone else.
      challenge(ids.registrationTaken, 'registration', null, users.newcomer, 2),
      challenge(ids.login, 'authentication', 'login', null, 3),
      challenge(ids.secondFactor, 'authentication', 'second_factor', users.owner, 4),
      challenge(ids.expired, 'authentication', 'login', null, 5, nowSeconds - 10),
    ],
  };
  return { ids, answers, rows, hostile: hostileResponses(answers.registration, answers.login) };
}

type Json = Record<string, any>;

/** Credential objects that are wrong in every way the issue names: types, huge base64, invalid CBOR, deep nesting. */
function hostileResponses(registration: Json, assertion: Json): unknown[] {
  const b64 = (bytes: number[] | Uint8Array) => isoBase64URL.fromBuffer(Uint8Array.from(bytes));
  const withInner = (base: Json, inner: Json) => ({ ...base, response: { ...base.response, ...inner } });
  const nestedCbor = (depth: number) => b64([...Array<number>(depth).fill(0x81), 0x00]);
  const nestedJson = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  const badAuthData = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(40).fill(0x41)]]) as never);
  const statement = new Map<string, number | Uint8Array>([['alg', -7], ['sig', new Uint8Array(8)]]);
  const packed = isoCBOR.encode(new Map<string, unknown>([['fmt', 'packed'], ['attStmt', statement], ['authData', new Uint8Array(37)]]) as never);
  const clientData = (value: unknown) => isoBase64URL.fromUTF8String(JSON.stringify(value));
  return [
    // wrong types
    { ...registration, id: 7 }, { ...registration, response: 'attestation' }, { ...registration, response: [] }, { ...assertion, type: null },
    withInner(registration, { transports: 'usb' }), withInner(assertion, { userHandle: 42 }), withInner(assertion, { signature: { a: 1 } }),
    withInner(registration, { clientDataJSON: clientData({ type: 5, challenge: {}, origin: [] }) }),
    withInner(assertion, { clientDataJSON: clientData(['webauthn.get']) }), withInner(assertion, { clientDataJSON: isoBase64URL.fromUTF8String('not json') }),
    { ...registration, rawId: `${registration.rawId}A` }, { ...assertion, id: 'AAAA', rawId: 'AAAA' }, { ...assertion, id: '', rawId: '' },
    // huge base64
    withInner(registration, { attestationObject: 'A'.repeat(60_000) }), withInner(assertion, { signature: 'B'.repeat(60_000) }),
    withInner(assertion, { authenticatorData: 'C'.repeat(60_000) }), withInner(assertion, { userHandle: 'D'.repeat(60_000) }),
    withInner(registration, { clientDataJSON: 'E'.repeat(60_000) }), { ...assertion, id: 'F'.repeat(60_000), rawId: 'F'.repeat(60_000) },
    // invalid CBOR and authenticator data
    withInner(registration, { attestationObject: b64([0xff]) }), withInner(registration, { attestationObject: b64([0xa1, 0x63, 0x66, 0x6d]) }),
    withInner(registration, { attestationObject: b64([0x80]) }), withInner(registration, { attestationObject: b64(badAuthData) }),
    withInner(registration, { attestationObject: b64(packed) }), withInner(assertion, { authenticatorData: b64([1, 2, 3]) }),
    withInner(assertion, { signature: b64([0x30, 0x02, 0x01]) }), withInner(assertion, { authenticatorData: '!!!!' }),
    // deep nesting: CBOR arrays that fit in 64 KiB, and JSON up to the parser's depth limit
    withInner(registration, { attestationObject: nestedCbor(40_000) }), withInner(assertion, { authenticatorData: nestedCbor(40_000) }),
    withInner(registration, { attestationObject: nestedJson(25) }), { ...assertion, clientExtensionResults: nestedJson(28) },
    withInner(assertion, { clientDataJSON: clientData(nestedJson(5000)) }),
  ];
}

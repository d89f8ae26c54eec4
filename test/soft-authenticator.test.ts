import { describe, expect, test } from 'bun:test';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { SOFT_AAGUID, SoftAuthenticator, type CeremonyKnobs, type SoftAuthenticatorSettings } from './support/soft-authenticator';

// The software authenticator against @simplewebauthn/server itself: the happy paths verify, and each
// knob makes the library refuse, in the way recorded here (a thrown Error, or `verified: false`).
const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:5173';
const USER_ID = 'k7mb2xqvn4hd8pe3wzt6yarc';

const registrationOptions = (excludeCredentials: { id: string }[] = []) =>
  generateRegistrationOptions({
    rpName: 'Gatehouse test',
    rpID: RP_ID,
    userID: new TextEncoder().encode(USER_ID),
    userName: 'someone@example.com',
    attestationType: 'none',
    excludeCredentials,
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: [-7, -8, -257],
  });

async function register(settings: Partial<SoftAuthenticatorSettings> = {}, knobs: CeremonyKnobs = {}, requireUserVerification = true) {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, ...settings });
  const options = await registrationOptions();
  const response = await authenticator.register(options, knobs);
  const run = () => verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: [ORIGIN], expectedRPID: RP_ID, requireUserVerification });
  return { authenticator, options, response, run };
}

/** A registered credential as our store will keep it: id, COSE public key, counter, transports. */
async function registered(settings: Partial<SoftAuthenticatorSettings> = {}) {
  const { authenticator, run } = await register(settings);
  const { registrationInfo } = await run();
  if (!registrationInfo) throw new Error('registration did not verify');
  return { authenticator, credential: { ...registrationInfo.credential } as WebAuthnCredential };
}

async function authenticate(authenticator: SoftAuthenticator, credential: WebAuthnCredential, knobs: CeremonyKnobs = {}, requireUserVerification = true, discoverable = false) {
  const options = await generateAuthenticationOptions({
    rpID: RP_ID,
    allowCredentials: discoverable ? undefined : [{ id: credential.id, transports: ['internal'] }],
    userVerification: 'preferred',
  });
  const response = await authenticator.authenticate(options, knobs);
  const run = () => verifyAuthenticationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: [ORIGIN], expectedRPID: RP_ID, credential, requireUserVerification });
  return { options, response, run };
}

/** How a refusal shows: the thrown message, or 'verified: false'. */
async function refusal(run: () => Promise<{ verified: boolean }>): Promise<string> {
  try {
    const result = await run();
    return result.verified ? 'verified' : 'verified: false';
  } catch (error) {
    return `throws: ${(error as Error).message}`;
  }
}

describe('registration', () => {
  test('verifies, and returns what the store keeps', async () => {
    const { options, response, run } = await register();
    expect(options.user.id).toBe(isoBase64URL.fromUTF8String(USER_ID));
    expect(options.pubKeyCredParams.map((param) => param.alg)).toEqual([-7, -8, -257]);
    expect(options.authenticatorSelection).toEqual({ residentKey: 'required', userVerification: 'preferred', requireResidentKey: true });
    const result = await run();
    expect(result.verified).toBe(true);
    const info = result.registrationInfo!;
    expect(info.fmt).toBe('none');
    expect(info.aaguid).toBe(SOFT_AAGUID);
    expect(info.credential.id).toBe(response.id);
    expect(info.credential.counter).toBe(0);
    expect(info.credential.transports).toEqual(['internal']);
    expect(info.credential.publicKey).toBeInstanceOf(Uint8Array);
    expect(info.credentialDeviceType).toBe('singleDevice');
    expect(info.credentialBackedUp).toBe(false);
    expect(info.userVerified).toBe(true);
    expect(info.origin).toBe(ORIGIN);
    expect(info.rpID).toBe(RP_ID);
  });

  test('a synced passkey reports multiDevice and backed up', async () => {
    const { registrationInfo } = await (await register({ backupEligible: true, backedUp: true })).run();
    expect(registrationInfo).toMatchObject({ credentialDeviceType: 'multiDevice', credentialBackedUp: true });
  });

  test('user verification may be optional', async () => {
    const { run } = await register({}, { userVerified: false }, false);
    expect((await run()).registrationInfo?.userVerified).toBe(false);
  });

  test('a string user id is refused: the library wants bytes', async () => {
    // @ts-expect-error the type already says Uint8Array
    const options = generateRegistrationOptions({ rpName: 'x', rpID: RP_ID, userName: 'x', userID: USER_ID });
    await expect(options).rejects.toThrow('String values for `userID` are no longer supported');
  });

  const cases: [string, Partial<SoftAuthenticatorSettings>, CeremonyKnobs, string][] = [
    ['wrong origin', {}, { origin: 'https://evil.example' }, `throws: Unexpected registration response origin "https://evil.example", expected one of: ${ORIGIN}`],
    ['wrong RP id', {}, { rpId: 'evil.example' }, 'throws: Unexpected RP ID hash'],
    ['user not present', {}, { userPresent: false }, 'throws: User presence was required, but user was not present'],
    ['user not verified', {}, { userVerified: false }, 'throws: User verification was required, but user could not be verified'],
    ['wrong challenge', {}, { challenge: 'b3RoZXI' }, 'throws: Unexpected registration response challenge "b3RoZXI", expected "'],
    ['the other ceremony type', {}, { type: 'webauthn.get' }, 'throws: Unexpected registration response type: webauthn.get'],
    ['backed up but not backup eligible', {}, { backedUp: true, backupEligible: false }, 'throws: Single-device credential indicated that it was backed up, which should be impossible.'],
  ];
  for (const [name, settings, knobs, expected] of cases) {
    test(`refused: ${name}`, async () => {
      expect(await refusal((await register(settings, knobs)).run)).toStartWith(expected);
    });
  }

  test('an algorithm outside supportedAlgorithmIDs is refused', async () => {
    const { options, response } = await register();
    const run = () => verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, supportedAlgorithmIDs: [-8] });
    expect(await refusal(run)).toBe('throws: Unexpected public key alg "-7", expected one of "-8"');
  });

  test('the library does not know which credentials exist: a re-registration verifies again', async () => {
    const { authenticator, credential } = await registered();
    // A browser honours excludeCredentials; the software authenticator does the same...
    await expect(authenticator.register(await registrationOptions([{ id: credential.id }]))).rejects.toThrow('InvalidStateError');
    // ...but a hostile client can send the same credential id again, and only our store can refuse it.
    const options = await registrationOptions([{ id: credential.id }]);
    const response = await authenticator.register(options, { credentialId: credential.id });
    const result = await verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID });
    expect(result.registrationInfo?.credential.id).toBe(credential.id);
  });

  test('transports are copied from the client unchecked: ours to validate before storing', async () => {
    const { options, response } = await register();
    response.response.transports = ['x'.repeat(1000)] as never;
    const result = await verifyRegistrationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID });
    expect(result.registrationInfo?.credential.transports).toEqual(['x'.repeat(1000)] as never);
  });

  test('hostile response shapes throw plain Errors or TypeErrors, never resolve', async () => {
    const options = await registrationOptions();
    const verify = (response: unknown) => refusal(() =>
      verifyRegistrationResponse({ response: response as RegistrationResponseJSON, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID }));
    expect(await verify({})).toBe('throws: Missing credential ID');
    expect(await verify({ id: 'AA', rawId: 'AA', type: 'public-key' })).toStartWith('throws: undefined is not an object');
    const clientDataJSON = isoBase64URL.fromUTF8String(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: ORIGIN }));
    const withAttestation = (attestationObject: string) => ({ id: 'AA', rawId: 'AA', type: 'public-key', response: { clientDataJSON, attestationObject } });
    expect(await verify(withAttestation('gqFhYg'))).toBe('throws: Map is not supported or well formed');
    expect(await verify(withAttestation('AAAA'))).toStartWith('throws: decodedAttestationObject.get is not a function');
    // 48,000 nested one-element arrays (what fits in a 64 KiB body) overflow the decoder's recursion:
    // a RangeError, thrown like any other, so one catch covers every hostile input.
    const deep = new Uint8Array(48_001).fill(0x81);
    deep[48_000] = 0;
    expect(await verify(withAttestation(isoBase64URL.fromBuffer(deep)))).toBe('throws: Maximum call stack size exceeded.');
  });
});

describe('authentication', () => {
  test('verifies with allowCredentials, and returns the new counter', async () => {
    const { authenticator, credential } = await registered();
    const { options, run } = await authenticate(authenticator, credential);
    expect(options.allowCredentials).toEqual([{ id: credential.id, transports: ['internal'], type: 'public-key' }]);
    const result = await run();
    expect(result.verified).toBe(true);
    expect(result.authenticationInfo).toMatchObject({ newCounter: 1, credentialID: credential.id, userVerified: true, credentialDeviceType: 'singleDevice', credentialBackedUp: false, origin: ORIGIN, rpID: RP_ID });
  });

  test('a discoverable login carries the user handle, which decodes to the user id', async () => {
    const { authenticator, credential } = await registered();
    const { options, response, run } = await authenticate(authenticator, credential, {}, true, true);
    expect(options.allowCredentials).toBeUndefined();
    expect(isoBase64URL.toUTF8String(response.response.userHandle!)).toBe(USER_ID);
    expect((await run()).verified).toBe(true);
  });

  test('the library never compares userHandle or the response id with the stored credential', async () => {
    const { authenticator, credential } = await registered();
    const { run } = await authenticate(authenticator, credential, { userHandle: isoBase64URL.fromUTF8String('someone-else') });
    expect((await run()).verified).toBe(true);
  });

  test('a response signed by another credential fails the signature', async () => {
    const one = await registered();
    const other = await registered();
    const { response, options } = await authenticate(one.authenticator, one.credential);
    const run = () => verifyAuthenticationResponse({ response, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, credential: other.credential });
    expect(await refusal(run)).toBe('verified: false');
  });

  const cases: [string, CeremonyKnobs, string][] = [
    ['wrong origin', { origin: 'https://evil.example' }, `throws: Unexpected authentication response origin "https://evil.example", expected one of: ${ORIGIN}`],
    ['wrong RP id', { rpId: 'evil.example' }, 'throws: Unexpected RP ID hash'],
    ['user not present', { userPresent: false }, 'throws: User not present during authentication'],
    ['user not verified', { userVerified: false }, 'throws: User verification required, but user could not be verified'],
    ['wrong challenge', { challenge: 'b3RoZXI' }, 'throws: Unexpected authentication response challenge "b3RoZXI", expected "'],
    ['the other ceremony type', { type: 'webauthn.create' }, 'throws: Unexpected authentication response type: webauthn.create'],
    ['tampered signature', { tamperSignature: true }, 'verified: false'],
    ['backed up but not backup eligible', { backedUp: true, backupEligible: false }, 'throws: Single-device credential indicated that it was backed up'],
  ];
  for (const [name, knobs, expected] of cases) {
    test(`refused: ${name}`, async () => {
      const { authenticator, credential } = await registered();
      expect(await refusal((await authenticate(authenticator, credential, knobs)).run)).toStartWith(expected);
    });
  }

  test('user verification may be optional', async () => {
    const { authenticator, credential } = await registered();
    const result = await (await authenticate(authenticator, credential, { userVerified: false }, false)).run();
    expect(result.authenticationInfo).toMatchObject({ userVerified: false });
    expect(result.verified).toBe(true);
  });

  test('a replayed response verifies again: single use is ours to enforce', async () => {
    const { authenticator, credential } = await registered({ counter: 'zero' });
    const { run } = await authenticate(authenticator, credential);
    expect((await run()).verified).toBe(true);
    expect((await run()).verified).toBe(true);
  });

  describe('sign counter', () => {
    // [stored counter, response counter, outcome]
    const table: [number, number, string][] = [
      [0, 0, 'verified'],
      [0, 1, 'verified'],
      [5, 6, 'verified'],
      [5, 5, 'throws: Response counter value 5 was lower than expected 5'],
      [5, 3, 'throws: Response counter value 3 was lower than expected 5'],
      // WebAuthn §7.2 step 22: either side non-zero and no increase is a possible clone, so a 0 after a
      // non-zero stored counter is refused too.
      [5, 0, 'throws: Response counter value 0 was lower than expected 5'],
    ];
    for (const [stored, sent, expected] of table) {
      test(`stored ${stored}, sent ${sent}: ${expected}`, async () => {
        const { authenticator, credential } = await registered();
        const { run } = await authenticate(authenticator, { ...credential, counter: stored }, { signCount: sent });
        expect(await refusal(run)).toBe(expected);
      });
    }

    test('a synced passkey that always sends 0 keeps working', async () => {
      const { authenticator, credential } = await registered({ counter: 'zero', backupEligible: true, backedUp: true });
      for (let i = 0; i < 3; i++) {
        const result = await (await authenticate(authenticator, credential)).run();
        expect(result.authenticationInfo).toMatchObject({ newCounter: 0, credentialDeviceType: 'multiDevice', credentialBackedUp: true });
        credential.counter = result.authenticationInfo.newCounter;
      }
    });

    test('the counter check runs before the signature check', async () => {
      const { authenticator, credential } = await registered();
      const { run } = await authenticate(authenticator, { ...credential, counter: 9 }, { tamperSignature: true });
      expect(await refusal(run)).toBe('throws: Response counter value 1 was lower than expected 9');
    });
  });

  test('hostile assertion shapes throw', async () => {
    const { credential } = await registered();
    const options = await generateAuthenticationOptions({ rpID: RP_ID });
    const verify = (response: unknown) => refusal(() =>
      verifyAuthenticationResponse({ response: response as AuthenticationResponseJSON, expectedChallenge: options.challenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, credential }));
    expect(await verify({ id: 'AA', rawId: 'AA', type: 'public-key' })).toBe('throws: Credential response clientDataJSON was not a string');
    expect(await verify({ id: 'AA', rawId: 'AB', type: 'public-key' })).toBe('throws: Credential ID was not base64url-encoded');
    expect(await verify({ id: 'AA', rawId: 'AA', type: 'public-key', response: { clientDataJSON: 'not json' } })).toStartWith('throws: JSON Parse error');
  });
});

import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { isCredentialId, isSupportedPublicKey, knownTransports, MAX_CREDENTIAL_ID_BYTES, MAX_PUBLIC_KEY_BYTES, SUPPORTED_ALGORITHMS } from './fields';

/**
 * The relying party's side of WebAuthn (API.md §13), every check done by @simplewebauthn/server:
 * this file only chooses its options and turns its answers (a throw for most refusals, `verified:
 * false` for a bad signature) into a result or a reason. Reasons are for the log, never the answer.
 */

export interface RelyingParty {
  /** The domain the credentials are scoped to, e.g. `example.com`. */
  id: string;
  name: string;
  /** Every origin the pages that run the ceremonies are served from, e.g. `https://example.com`. */
  origins: string[];
}

export type UserVerification = 'required' | 'preferred';

/** The browser's timeout matches the challenge's 5 minutes. */
const TIMEOUT_MS = 5 * 60 * 1000;

export interface CredentialRef {
  /** base64url */
  id: string;
  transports: string[];
}

export interface Expected {
  challenge: string;
  userVerification: UserVerification;
}

export type Verdict<T> = { ok: true; value: T } | { ok: false; reason: string };

const refused = (reason: unknown): { ok: false; reason: string } => ({
  ok: false,
  reason: (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)).slice(0, 300),
});

const toDescriptors = (credentials: CredentialRef[]) => credentials.map((credential) => ({ id: credential.id, transports: credential.transports }));

/**
 * Every passkey is discoverable (resident key required), so it also serves the login without a
 * user id. The user handle is the user id's bytes, so a login's userHandle decodes back to it.
 */
export function creationOptions(
  rp: RelyingParty,
  user: { id: string; name: string },
  exclude: CredentialRef[],
  userVerification: UserVerification,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: new TextEncoder().encode(user.id),
    userName: user.name,
    attestationType: 'none',
    excludeCredentials: toDescriptors(exclude),
    // A fresh object each time: the library writes requireResidentKey into the one it is given.
    authenticatorSelection: { residentKey: 'required', userVerification },
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    timeout: TIMEOUT_MS,
  });
}

/** Without `allow`, any discoverable credential of the RP id may answer. */
export function requestOptions(
  rp: RelyingParty,
  allow: CredentialRef[] | undefined,
  userVerification: UserVerification,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allow === undefined ? undefined : toDescriptors(allow),
    userVerification,
    timeout: TIMEOUT_MS,
  });
}

export interface NewCredential {
  /** base64url, from the authenticator data (not the client's `id`). */
  id: string;
  /** base64url of the COSE public key. */
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
  aaguid: string;
}

export async function verifyRegistration(rp: RelyingParty, expected: Expected, response: unknown): Promise<Verdict<NewCredential>> {
  try {
    const { verified, registrationInfo: info } = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: expected.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: expected.userVerification === 'required',
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
    if (!verified || info === undefined) return refused('not verified');
    const { credential } = info;
    // Import's own checks (passkey-fields.ts), so every user registered here can be exported and imported again.
    if (!isCredentialId(credential.id)) return refused(`credential id longer than ${MAX_CREDENTIAL_ID_BYTES} bytes`);
    const publicKey = isoBase64URL.fromBuffer(credential.publicKey);
    if (!isSupportedPublicKey(publicKey)) return refused(`public key longer than ${MAX_PUBLIC_KEY_BYTES} bytes, or not a supported COSE key`);
    return {
      ok: true,
      value: {
        id: credential.id,
        publicKey,
        counter: credential.counter,
        transports: knownTransports(credential.transports),
        backedUp: info.credentialBackedUp,
        aaguid: info.aaguid,
      },
    };
  } catch (error) {
    return refused(error);
  }
}

export interface StoredCredential {
  /** base64url */
  credentialId: string;
  /** base64url of the COSE public key. */
  publicKey: string;
  counter: number;
  transports: string[];
}

/**
 * The library refuses a sign counter that does not increase when either it or the stored one is
 * non-zero (WebAuthn Level 3 §7.2); 0 after 0 keeps working for synced passkeys.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  expected: Expected,
  response: unknown,
  credential: StoredCredential,
): Promise<Verdict<{ counter: number; backedUp: boolean }>> {
  try {
    const { verified, authenticationInfo: info } = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: expected.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: expected.userVerification === 'required',
      credential: {
        id: credential.credentialId,
        publicKey: isoBase64URL.toBuffer(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports,
      },
    });
    if (!verified) return refused('signature not verified');
    return { ok: true, value: { counter: info.newCounter, backedUp: info.credentialBackedUp } };
  } catch (error) {
    return refused(error);
  }
}

/** Whether the assertion's userHandle, when it carries one, names `userId` (the handle is its bytes). */
export function userHandleMatches(response: { response: { userHandle?: string | null } }, userId: string): boolean {
  const handle = response.response.userHandle;
  if (handle === undefined || handle === null || handle === '') return true;
  return isoBase64URL.isBase64URL(handle) && isoBase64URL.toUTF8String(handle) === userId;
}

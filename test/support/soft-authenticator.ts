import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A WebAuthn authenticator and client in one, for tests that talk to the server without a browser:
 * it turns the options the server hands out into the JSON a browser would relay back (attestation
 * `none`, ES256 on P-256), and every knob below breaks one thing the server must check.
 */

const ES256 = -7;
const FLAG = { up: 0x01, uv: 0x04, be: 0x08, bs: 0x10, at: 0x40 } as const;
/** Not a real product's AAGUID, so a name lookup finds nothing unless a test passes one. */
export const SOFT_AAGUID = '5e1f7e57-0000-4000-8000-50f7a07e0001';

export interface SoftAuthenticatorSettings {
  /** The page's origin the client puts in clientDataJSON. */
  origin: string;
  aaguid?: string;
  /** 'increasing': +1 per assertion, like a security key; 'zero': always 0, like a synced passkey. */
  counter?: 'increasing' | 'zero';
  /** Discoverable credentials keep the user handle and can answer an empty allowCredentials. */
  residentKeys?: boolean;
  userVerified?: boolean;
  backupEligible?: boolean;
  backedUp?: boolean;
}

/** Per-ceremony overrides; each one leaves the rest of the response well formed. */
export interface CeremonyKnobs {
  origin?: string;
  /** The RP id whose SHA-256 goes into authenticatorData (default: the options' RP id). */
  rpId?: string;
  challenge?: string;
  /** clientDataJSON.type, e.g. 'webauthn.get' in a registration. */
  type?: string;
  userPresent?: boolean;
  userVerified?: boolean;
  backupEligible?: boolean;
  backedUp?: boolean;
  /** This response's sign counter, whatever the counter mode says. */
  signCount?: number;
  /** A well-formed DER signature, made with the right key over other bytes. */
  tamperSignature?: boolean;
  /** Registration: re-register this held credential (ignores excludeCredentials). Authentication: answer with it. */
  credentialId?: string;
  /** Authentication: the userHandle to send; null leaves it out. */
  userHandle?: string | null;
  /** Registration: the COSE public key grows to exactly this many bytes, with a private label no verifier reads. */
  publicKeyBytes?: number;
}

export interface SoftCredential {
  id: string;
  rpId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** base64url of the user.id bytes from the creation options, for discoverable credentials. */
  userHandle?: string;
  signCount: number;
}

type Bytes = Uint8Array<ArrayBuffer>;
const sha256 = (data: Uint8Array | string): Bytes => new Uint8Array(createHash('sha256').update(data).digest());
const b64url = (bytes: Bytes) => isoBase64URL.fromBuffer(bytes);

function concat(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function uint32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value >>> 0);
  return out;
}

function aaguidBytes(aaguid: string): Uint8Array {
  const hex = aaguid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not an AAGUID: ${aaguid}`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** A label from the private range (RFC 9052 §16.2 reserves below -65536); parsers skip labels they do not know. */
const PRIVATE_LABEL = -70_000;

function coseKey(publicKey: KeyObject, totalBytes?: number): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  // kty EC2, alg ES256, crv P-256, x, y (RFC 9053)
  const entries = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, ES256],
    [-1, 1],
    [-2, isoBase64URL.toBuffer(jwk.x!)],
    [-3, isoBase64URL.toBuffer(jwk.y!)],
  ]);
  if (totalBytes === undefined) return isoCBOR.encode(entries);
  // The padding's own header (label and byte-string length) takes a few bytes: shrink until it fits.
  for (let padding = totalBytes - isoCBOR.encode(entries).length; padding >= 0; padding--) {
    const key = isoCBOR.encode(new Map([...entries, [PRIVATE_LABEL, new Uint8Array(padding)]]));
    if (key.length === totalBytes) return key;
  }
  throw new Error(`no COSE key of exactly ${totalBytes} bytes`);
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  private readonly settings: Required<SoftAuthenticatorSettings>;

  constructor(settings: SoftAuthenticatorSettings) {
    this.settings = {
      aaguid: SOFT_AAGUID,
      counter: 'increasing',
      residentKeys: true,
      userVerified: true,
      backupEligible: false,
      backedUp: false,
      ...settings,
    };
  }

  credential(id: string): SoftCredential {
    const found = this.credentials.find((credential) => credential.id === id);
    if (!found) throw new Error(`the authenticator holds no credential ${id}`);
    return found;
  }

  async register(options: PublicKeyCredentialCreationOptionsJSON, knobs: CeremonyKnobs = {}): Promise<RegistrationResponseJSON> {
    const rpId = options.rp.id;
    if (!rpId) throw new Error('the options name no RP id');
    if (!options.pubKeyCredParams.some((param) => param.alg === ES256)) throw new Error('NotSupportedError: ES256 not offered');
    let credential: SoftCredential;
    if (knobs.credentialId) {
      credential = this.credential(knobs.credentialId);
    } else {
      const excluded = new Set((options.excludeCredentials ?? []).map((entry) => entry.id));
      if (this.credentials.some((held) => held.rpId === rpId && excluded.has(held.id))) {
        throw new Error('InvalidStateError: the authenticator already holds an excluded credential');
      }
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      credential = {
        id: b64url(new Uint8Array(randomBytes(32))),
        rpId,
        privateKey,
        publicKey,
        userHandle: this.settings.residentKeys ? options.user.id : undefined,
        signCount: 0,
      };
      this.credentials.push(credential);
    }
    const idBytes = isoBase64URL.toBuffer(credential.id);
    const idLength = new Uint8Array([idBytes.length >> 8, idBytes.length & 0xff]);
    const attested = concat(aaguidBytes(this.settings.aaguid), idLength, idBytes, coseKey(credential.publicKey, knobs.publicKeyBytes));
    const authData = this.authenticatorData(rpId, credential, knobs, attested);
    const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, string>()],
      ['authData', authData],
    ]));
    const clientData = this.clientDataJSON('webauthn.create', options.challenge, knobs);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientData),
        attestationObject: b64url(attestationObject),
        authenticatorData: b64url(authData),
        transports: ['internal'],
        publicKeyAlgorithm: ES256,
        publicKey: b64url(new Uint8Array(credential.publicKey.export({ format: 'der', type: 'spki' }))),
      },
      clientExtensionResults: { credProps: { rk: this.settings.residentKeys } },
    };
  }

  async authenticate(options: PublicKeyCredentialRequestOptionsJSON, knobs: CeremonyKnobs = {}): Promise<AuthenticationResponseJSON> {
    const rpId = options.rpId;
    if (!rpId) throw new Error('the options name no RP id');
    const credential = knobs.credentialId ? this.credential(knobs.credentialId) : this.pick(rpId, options);
    if (this.settings.counter === 'increasing') credential.signCount += 1;
    const authData = this.authenticatorData(rpId, credential, knobs);
    const clientData = this.clientDataJSON('webauthn.get', options.challenge, knobs);
    const signed = concat(authData, sha256(clientData));
    if (knobs.tamperSignature) signed[0] = (signed[0] ?? 0) ^ 0x01;
    // node:crypto signs ECDSA in DER by default, the encoding WebAuthn wants for ES256.
    const signature = new Uint8Array(sign('sha256', signed, credential.privateKey));
    const userHandle = knobs.userHandle === undefined ? credential.userHandle : (knobs.userHandle ?? undefined);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(userHandle === undefined ? {} : { userHandle }),
      },
      clientExtensionResults: {},
    };
  }

  /** What a browser does: a listed credential, or with an empty list the newest discoverable one. */
  private pick(rpId: string, options: PublicKeyCredentialRequestOptionsJSON): SoftCredential {
    const allowed = (options.allowCredentials ?? []).map((entry) => entry.id);
    const candidates = this.credentials.filter((credential) =>
      credential.rpId === rpId && (allowed.length > 0 ? allowed.includes(credential.id) : credential.userHandle !== undefined));
    const chosen = candidates.at(-1);
    if (!chosen) throw new Error('NotAllowedError: no matching credential');
    return chosen;
  }

  private authenticatorData(rpId: string, credential: SoftCredential, knobs: CeremonyKnobs, attested?: Uint8Array): Bytes {
    const on = (knob: boolean | undefined, fallback: boolean, bit: number) => ((knob ?? fallback) ? bit : 0);
    const flags = on(knobs.userPresent, true, FLAG.up)
      | on(knobs.userVerified, this.settings.userVerified, FLAG.uv)
      | on(knobs.backupEligible, this.settings.backupEligible, FLAG.be)
      | on(knobs.backedUp, this.settings.backedUp, FLAG.bs)
      | (attested ? FLAG.at : 0);
    const signCount = knobs.signCount ?? (this.settings.counter === 'zero' ? 0 : credential.signCount);
    return concat(sha256(knobs.rpId ?? rpId), new Uint8Array([flags]), uint32(signCount), attested ?? new Uint8Array());
  }

  private clientDataJSON(type: string, challenge: string, knobs: CeremonyKnobs): Bytes {
    return new TextEncoder().encode(JSON.stringify({
      type: knobs.type ?? type,
      challenge: knobs.challenge ?? challenge,
      origin: knobs.origin ?? this.settings.origin,
      crossOrigin: false,
    }));
  }
}

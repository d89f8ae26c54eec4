import { decodePartialCBOR } from '@levischuck/tiny-cbor';

/**
 * What a stored passkey's fields may hold (API.md §13), checked for an imported line without loading
 * @simplewebauthn/server (about 20 MB of a bulk import's memory): its CBOR decoder, tiny-cbor, is
 * loaded alone.
 */

/**
 * Ed25519, ES256 and RS256, given to both generate and verify so the set is ours: under Bun the
 * library's own default also offers ML-DSA-44.
 */
export const SUPPORTED_ALGORITHMS = [-8, -7, -257];
/** WebAuthn Level 3 §7.1: a longer credential id must be refused. */
export const MAX_CREDENTIAL_ID_BYTES = 1023;
/**
 * The largest stored COSE public key: an RS256 key of 8,192 bits takes about 1,040 bytes, EC2 and OKP
 * keys under 100. Registration and import refuse longer ones alike, so every exported user imports.
 */
export const MAX_PUBLIC_KEY_BYTES = 2048;
/** A user holds at most this many passkeys, registered through the API or imported. */
export const MAX_PASSKEYS_PER_USER = 10;
/** The values WebAuthn defines (with the older `cable`); the client's list is a hint and copied unchecked by the library. */
export const TRANSPORT_NAMES = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'];
const TRANSPORTS = new Set(TRANSPORT_NAMES);

export const isKnownTransport = (name: unknown): name is string => typeof name === 'string' && TRANSPORTS.has(name);

/** Known transport names only, each once; anything else in the client's list is dropped. */
export function knownTransports(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return [...new Set(list.filter(isKnownTransport))];
}

/** Canonical unpadded base64url, as the library writes ids and keys: its bytes, or undefined. */
function base64urlBytes(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** A stored credential id: canonical base64url of 1 to 1023 bytes. */
export function isCredentialId(text: string): boolean {
  const bytes = base64urlBytes(text);
  return bytes !== undefined && bytes.length <= MAX_CREDENTIAL_ID_BYTES;
}

/** A stored public key: canonical base64url of a COSE key (kty and alg) of an algorithm Gatehouse verifies. */
export function isSupportedPublicKey(text: string): boolean {
  const bytes = base64urlBytes(text);
  if (bytes === undefined || bytes.length > MAX_PUBLIC_KEY_BYTES) return false;
  try {
    const [key] = decodePartialCBOR(new Uint8Array(bytes), 0);
    return key instanceof Map && key.get(1) !== undefined && SUPPORTED_ALGORITHMS.includes(key.get(3) as number);
  } catch {
    return false;
  }
}

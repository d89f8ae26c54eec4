import type { RelyingParty } from '../passkeys/webauthn/ceremonies';

/** The raw values of --webauthn-rp-id, --webauthn-rp-name and every --webauthn-origin (or their variables). */
export interface WebAuthnFlags {
  rpId?: string;
  rpName?: string;
  origins: string[];
}

/** A usage error's message, so config.ts keeps the one error type. */
type Fail = (message: string) => never;

/** Lower-case DNS labels, `localhost` included: what browsers accept as an RP id (never an IP address or a URL). */
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Null without an RP id (passkeys off). The name defaults to the RP id and the origins to
 * `https://<rp id>`. Each origin must be a bare http(s) origin on the RP id or a subdomain of it,
 * since the browser would refuse any other; plain http only for localhost.
 */
export function parseRelyingParty(flags: WebAuthnFlags, fail: Fail): RelyingParty | null {
  if (flags.rpId === undefined) {
    if (flags.rpName !== undefined || flags.origins.length > 0) fail('--webauthn-rp-name and --webauthn-origin need --webauthn-rp-id');
    return null;
  }
  const id = flags.rpId.toLowerCase();
  if (!HOSTNAME.test(id) || /^[0-9.]+$/.test(id)) fail(`invalid --webauthn-rp-id '${flags.rpId}': expected a domain name such as example.com`);
  const name = flags.rpName ?? id;
  if (name.trim() === '') fail('--webauthn-rp-name must not be empty');
  const origins = flags.origins.length === 0 ? [`https://${id}`] : flags.origins.map((origin) => parseOrigin(origin, id, fail));
  return { id, name, origins: [...new Set(origins)] };
}

function parseOrigin(value: string, rpId: string, fail: Fail): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const bare = url !== undefined && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  if (!bare || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    fail(`invalid --webauthn-origin '${value}': expected an origin such as https://${rpId}`);
  }
  const host = url!.hostname;
  if (host !== rpId && !host.endsWith(`.${rpId}`)) fail(`--webauthn-origin '${value}' is not on the RP id ${rpId} or a subdomain of it`);
  if (url!.protocol === 'http:' && host !== 'localhost' && !host.endsWith('.localhost')) {
    fail(`--webauthn-origin '${value}': browsers allow passkeys over plain http only on localhost`);
  }
  return url!.origin;
}

/** GATEHOUSE_WEBAUTHN_ORIGINS: comma-separated, spaces around each ignored. */
export const splitOrigins = (value: string): string[] =>
  value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');

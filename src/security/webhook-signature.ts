import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A webhook secret as Standard Webhooks writes it (`whsec_` and the standard base64 of the key, the
 * form the `standardwebhooks` package reads), with the 24 to 64 key bytes the specification asks
 * for. Undefined when the value is not one.
 */
export function parseWebhookSecret(value: string): Uint8Array | undefined {
  if (!value.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = value.slice(SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) return undefined;
  const key = new Uint8Array(Buffer.from(encoded, 'base64'));
  return key.length >= 24 && key.length <= 64 ? key : undefined;
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`. node:crypto rather than the package's pure-JS HMAC;
 * the tests check every signature with the package, as a receiver would.
 */
export function signWebhook(key: Uint8Array, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** A signed JSON POST as Standard Webhooks sends it (the webhooks and the password migration hook): no redirect followed. */
export function signedJsonPost(key: Uint8Array, id: string, timestampSeconds: number, body: string, signal: AbortSignal): RequestInit {
  return {
    method: 'POST',
    body,
    redirect: 'manual',
    signal,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': signWebhook(key, id, timestampSeconds, body),
    },
  };
}

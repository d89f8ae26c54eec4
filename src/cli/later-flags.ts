import { nonEmpty, parseUrl, UsageError } from './values';
import type { FlagValues } from './config';

/**
 * The serve flags API.md §8 lists for features still to come (§10 to §13), parsed and checked now so
 * that a bad value stops start-up like any other. Nothing acts on them yet.
 */
export interface LaterFeatures {
  databaseUrl: string | null;
  redisUrl: string | null;
  metrics: boolean;
  webhook: { url: string; secret: string } | null;
  eventsRetentionDays: number;
  webauthn: { rpId: string; rpName: string; origins: string[] } | null;
}

export function laterFeatures(values: FlagValues, options: { metrics: boolean; secretConfigured: boolean }): LaterFeatures {
  const databaseUrl = values['database-url'] === undefined ? null : parseUrl('database-url', values['database-url'], ['postgres', 'postgresql'], true);
  // §10: every instance must share the one secret, so none may generate its own.
  if (databaseUrl !== null && !options.secretConfigured) throw new UsageError('--database-url needs a configured secret (--secret or --secret-file)');
  return {
    databaseUrl,
    redisUrl: values['redis-url'] === undefined ? null : parseUrl('redis-url', values['redis-url'], ['redis', 'rediss'], true),
    metrics: options.metrics,
    webhook: parseWebhook(values['webhook-url'], values['webhook-secret']),
    eventsRetentionDays: parseDays(values['events-retention-days'] ?? '90'),
    webauthn: parseWebauthn(values['webauthn-rp-id'], values['webauthn-rp-name'], values['webauthn-origin']),
  };
}

/** Standard Webhooks secrets: base64 (optionally after `whsec_`) of 24 to 64 bytes. */
function parseWebhook(url: string | undefined, secret: string | undefined): LaterFeatures['webhook'] {
  if (url === undefined && secret === undefined) return null;
  if (url === undefined || secret === undefined) throw new UsageError('--webhook-url and --webhook-secret go together');
  const encoded = secret.replace(/^whsec_/, '');
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').length : 0;
  if (bytes < 24 || bytes > 64) throw new UsageError('--webhook-secret must be base64 (optionally after whsec_) of 24 to 64 bytes');
  return { url: parseUrl('webhook-url', url), secret };
}

function parseDays(value: string): number {
  const days = Number(value);
  if (!/^[0-9]+$/.test(value) || days < 1 || days > 36500) throw new UsageError(`invalid --events-retention-days '${value}': expected 1 to 36500`);
  return days;
}

/** An origin is scheme, host and port only: what a browser reports for the page running the ceremony. */
function parseOrigin(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.origin !== value) {
    throw new UsageError(`invalid --webauthn-origin '${value}': expected an origin such as https://example.com`);
  }
  return value;
}

function parseWebauthn(rpId: string | undefined, rpName: string | undefined, origins: string[] | undefined): LaterFeatures['webauthn'] {
  if (rpId === undefined) {
    if (rpName !== undefined || origins !== undefined) throw new UsageError('--webauthn-rp-name and --webauthn-origin need --webauthn-rp-id');
    return null;
  }
  if (!/^(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(rpId)) throw new UsageError(`invalid --webauthn-rp-id '${rpId}': expected a domain such as example.com`);
  if (origins === undefined || origins.length === 0) throw new UsageError('--webauthn-rp-id needs at least one --webauthn-origin');
  return { rpId: rpId.toLowerCase(), rpName: nonEmpty('webauthn-rp-name', rpName ?? rpId), origins: origins.map(parseOrigin) };
}

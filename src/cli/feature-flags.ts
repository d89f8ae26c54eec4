import type { RelyingParty } from '../passkeys/webauthn/ceremonies';
import { isLoopbackHost, type MigrationHookTarget } from '../password-migration/model';
import { parseWebhookSecret } from '../security/webhook-signature';
import { nonEmpty, parseUrl, UsageError } from './values';
import { parseRelyingParty } from './webauthn';

/** The serve flags of API.md §10 to §13 and §19: several instances, metrics, webhooks, events, passkeys, the password migration hook. */
export interface FeatureFlags {
  databaseUrl: string | null;
  redisUrl: string | null;
  metrics: boolean;
  /** Both or neither: `--webhook-url` with `--webhook-secret`. */
  webhook: { url: string; key: Uint8Array } | null;
  eventsRetentionDays: number;
  /** Null when no --webauthn-rp-id is given: passkeys are off. */
  relyingParty: RelyingParty | null;
  /** Both or neither: `--password-migration-url` with `--password-migration-secret` (API.md §19). */
  passwordMigration: MigrationHookTarget | null;
}

type FeatureFlag =
  | 'database-url'
  | 'redis-url'
  | 'webhook-url'
  | 'webhook-secret'
  | 'events-retention-days'
  | 'webauthn-rp-id'
  | 'webauthn-rp-name'
  | 'password-migration-url'
  | 'password-migration-secret';
/** The raw values of these flags (or their variables); --webauthn-origin is repeatable. */
export type FeatureFlagValues = Partial<Record<FeatureFlag, string>> & { 'webauthn-origin'?: string[] };

export function featureFlags(values: FeatureFlagValues, options: { metrics: boolean; secretConfigured: boolean }): FeatureFlags {
  const databaseUrl = values['database-url'] === undefined ? null : parseUrl('database-url', values['database-url'], ['postgres', 'postgresql'], true);
  // §10: every instance must share the one secret (or keys file, §17), so none may generate its own.
  if (databaseUrl !== null && !options.secretConfigured) throw new UsageError('--database-url needs a configured secret (--secret, --secret-file or --keys-file)');
  return {
    databaseUrl,
    redisUrl: values['redis-url'] === undefined ? null : parseUrl('redis-url', values['redis-url'], ['redis', 'rediss'], true),
    metrics: options.metrics,
    webhook: parseWebhook(values['webhook-url'], values['webhook-secret']),
    eventsRetentionDays: parseDays(values['events-retention-days'] ?? '90'),
    relyingParty: parseRelyingParty(
      { rpId: values['webauthn-rp-id'], rpName: values['webauthn-rp-name'], origins: values['webauthn-origin'] ?? [] },
      (message) => {
        throw new UsageError(message);
      },
    ),
    passwordMigration: parsePasswordMigration(values['password-migration-url'], values['password-migration-secret']),
  };
}

/** The hook receives passwords: https, or http to this machine only (API.md §19). */
function parsePasswordMigration(url: string | undefined, secret: string | undefined): FeatureFlags['passwordMigration'] {
  if (url === undefined && secret === undefined) return null;
  if (url === undefined) throw new UsageError('--password-migration-secret needs --password-migration-url');
  if (secret === undefined) throw new UsageError('--password-migration-url needs --password-migration-secret');
  // The URL is not echoed: its path or query may carry a token of the hook's.
  const checkedUrl = parseUrl('password-migration-url', url, ['http', 'https'], true);
  const { protocol, hostname } = new URL(checkedUrl);
  if (protocol === 'http:' && !isLoopbackHost(hostname)) {
    throw new UsageError(
      `invalid --password-migration-url: it receives passwords, so it must be https, or http to a loopback address (localhost, 127.0.0.1, [::1]), not http to ${hostname}`,
    );
  }
  const key = parseWebhookSecret(secret);
  if (key === undefined) throw new UsageError('invalid --password-migration-secret: expected whsec_ and the base64 of 24 to 64 random bytes');
  return { url: checkedUrl, key };
}

function parseWebhook(url: string | undefined, secret: string | undefined): FeatureFlags['webhook'] {
  if (url === undefined && secret === undefined) return null;
  if (url === undefined) throw new UsageError('--webhook-secret needs --webhook-url');
  if (secret === undefined) throw new UsageError('--webhook-url needs --webhook-secret');
  const checkedUrl = parseUrl('webhook-url', url);
  const key = parseWebhookSecret(secret);
  // The secret itself is never echoed.
  if (key === undefined) throw new UsageError('invalid --webhook-secret: expected whsec_ and the base64 of 24 to 64 random bytes');
  return { url: checkedUrl, key };
}

function parseDays(value: string): number {
  const days = Number(value);
  if (!/^[0-9]+$/.test(value) || days < 1 || days > 36500) throw new UsageError(`invalid --events-retention-days '${value}': expected 1 to 36500`);
  return days;
}

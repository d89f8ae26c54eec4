import { type BreachMode, DEFAULT_PWNED_API_URL } from '../security/breach-check';
import { parseWebhookSecret } from '../security/webhook-signature';

export interface ServeConfig {
  port: number;
  host: string;
  dir: string;
  secret: string | null;
  pwnedCheck: BreachMode;
  pwnedApiUrl: string;
  docs: boolean;
  metrics: boolean;
  /** Both or neither: `--webhook-url` with `--webhook-secret`. */
  webhook: { url: string; key: Uint8Array } | null;
  eventsRetentionDays: number;
  /** GATEHOUSE_WEBHOOK_TIMING_SCALE, for tests only: multiplies every webhook delay (default 1). */
  webhookTimingScale: number;
}

/** A bad flag or value: main prints the message on one line and exits with code 2. */
export class UsageError extends Error {}

type Env = Record<string, string | undefined>;

const FLAG_ENV: Record<string, string> = {
  port: 'GATEHOUSE_PORT',
  host: 'GATEHOUSE_HOST',
  dir: 'GATEHOUSE_DATA_DIR',
  secret: 'GATEHOUSE_SECRET',
  'pwned-check': 'GATEHOUSE_PWNED_CHECK',
  'pwned-api-url': 'GATEHOUSE_PWNED_API_URL',
  'webhook-url': 'GATEHOUSE_WEBHOOK_URL',
  'webhook-secret': 'GATEHOUSE_WEBHOOK_SECRET',
  'events-retention-days': 'GATEHOUSE_EVENTS_RETENTION_DAYS',
};

/** Flags beat their environment variables (API.md §8). Accepts `--flag value` and `--flag=value`. */
export function parseServeConfig(args: string[], env: Env): ServeConfig {
  const values: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(FLAG_ENV)) {
    const value = env[variable];
    if (value !== undefined && value !== '') values[flag] = value;
  }
  let docs = true;
  let metrics = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--no-docs') {
      docs = false;
      continue;
    }
    if (arg === '--no-metrics') {
      metrics = false;
      continue;
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const flag = match?.[1];
    if (flag === undefined || !(flag in FLAG_ENV)) throw new UsageError(`unknown argument '${arg}' (see 'gatehouse --help')`);
    const value = match?.[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${flag} needs a value`);
    values[flag] = value;
  }
  return {
    port: parsePort(values.port ?? '4000'),
    host: nonEmpty('host', values.host ?? '127.0.0.1'),
    dir: nonEmpty('dir', values.dir ?? './gatehouse_data'),
    secret: values.secret === undefined ? null : parseSecret(values.secret),
    pwnedCheck: parseMode(values['pwned-check'] ?? 'online'),
    pwnedApiUrl: parseUrl(values['pwned-api-url'] ?? DEFAULT_PWNED_API_URL),
    docs,
    metrics,
    webhook: parseWebhook(values['webhook-url'], values['webhook-secret']),
    eventsRetentionDays: parseDays(values['events-retention-days'] ?? '90'),
    webhookTimingScale: parseScale(env.GATEHOUSE_WEBHOOK_TIMING_SCALE),
  };
}

function parseWebhook(url: string | undefined, secret: string | undefined): ServeConfig['webhook'] {
  if (url === undefined && secret === undefined) return null;
  if (url === undefined) throw new UsageError('--webhook-secret needs --webhook-url');
  if (secret === undefined) throw new UsageError('--webhook-url needs --webhook-secret');
  if (!/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) throw new UsageError(`invalid --webhook-url '${url}': expected an http(s) URL`);
  const key = parseWebhookSecret(secret);
  // The secret itself is never echoed.
  if (key === undefined) throw new UsageError('invalid --webhook-secret: expected whsec_ and the base64 of 24 to 64 random bytes');
  return { url, key };
}

function parseDays(value: string): number {
  const days = Number(value);
  if (!/^[0-9]+$/.test(value) || days < 1 || days > 36_500) throw new UsageError(`invalid --events-retention-days '${value}': expected 1 to 36500`);
  return days;
}

function parseScale(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  const scale = Number(value);
  if (!(scale > 0 && scale <= 1)) throw new UsageError(`invalid GATEHOUSE_WEBHOOK_TIMING_SCALE '${value}': expected a number above 0, at most 1`);
  return scale;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^[0-9]+$/.test(value) || port > 65535) throw new UsageError(`invalid port '${value}': expected 0 to 65535`);
  return port;
}

function parseMode(value: string): BreachMode {
  if (value === 'online' || value === 'offline' || value === 'off') return value;
  throw new UsageError(`invalid --pwned-check '${value}': expected online, offline or off`);
}

function parseUrl(value: string): string {
  if (!/^https?:\/\/[^\s]+$/.test(value) || !URL.canParse(value)) {
    throw new UsageError(`invalid --pwned-api-url '${value}': expected an http(s) URL`);
  }
  return value;
}

/** HTTP strips spaces around a header value, so a secret with them could never match. */
function parseSecret(value: string): string {
  nonEmpty('secret', value);
  if (value.trim() !== value) throw new UsageError('--secret must not start or end with whitespace');
  return value;
}

function nonEmpty(flag: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  return value;
}

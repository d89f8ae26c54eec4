import { parseArgs } from 'node:util';
import { type BreachMode, DEFAULT_PWNED_API_URL } from '../breach-check/checker';
import { type FeatureFlags, featureFlags } from './feature-flags';
import { checkSecret, readPrivateFile } from './secret-rules';
import { nonEmpty, parseUrl, UsageError } from './values';
import { splitOrigins } from './webauthn';

export interface ServeConfig extends FeatureFlags {
  port: number;
  host: string;
  dir: string;
  /** Given as a value (--secret, GATEHOUSE_SECRET); null when read from a file or generated. */
  secret: string | null;
  /** Given as a file (--secret-file, GATEHOUSE_SECRET_FILE); read at start-up. */
  secretFile: string | null;
  /** The service keys (--keys-file, GATEHOUSE_KEYS_FILE; API.md §17), instead of a secret; read at start-up and on change. */
  keysFile: string | null;
  pwnedCheck: BreachMode;
  pwnedApiUrl: string;
  docs: boolean;
  /** GATEHOUSE_WEBHOOK_TIMING_SCALE, for tests only: multiplies every webhook delay (default 1). */
  webhookTimingScale: number;
}

export { UsageError };

type Env = Record<string, string | undefined>;

/** Every serve flag that takes a value, with its environment variable (API.md §8). */
export const VALUE_FLAGS = {
  port: 'GATEHOUSE_PORT',
  host: 'GATEHOUSE_HOST',
  dir: 'GATEHOUSE_DATA_DIR',
  secret: 'GATEHOUSE_SECRET',
  'secret-file': 'GATEHOUSE_SECRET_FILE',
  'keys-file': 'GATEHOUSE_KEYS_FILE',
  'pwned-check': 'GATEHOUSE_PWNED_CHECK',
  'pwned-api-url': 'GATEHOUSE_PWNED_API_URL',
  'database-url': 'GATEHOUSE_DATABASE_URL',
  'redis-url': 'GATEHOUSE_REDIS_URL',
  'webhook-url': 'GATEHOUSE_WEBHOOK_URL',
  'webhook-secret': 'GATEHOUSE_WEBHOOK_SECRET',
  'database-url-file': 'GATEHOUSE_DATABASE_URL_FILE',
  'redis-url-file': 'GATEHOUSE_REDIS_URL_FILE',
  'webhook-secret-file': 'GATEHOUSE_WEBHOOK_SECRET_FILE',
  'password-migration-url': 'GATEHOUSE_PASSWORD_MIGRATION_URL',
  'password-migration-secret': 'GATEHOUSE_PASSWORD_MIGRATION_SECRET',
  'password-migration-secret-file': 'GATEHOUSE_PASSWORD_MIGRATION_SECRET_FILE',
  'events-retention-days': 'GATEHOUSE_EVENTS_RETENTION_DAYS',
  'webauthn-rp-id': 'GATEHOUSE_WEBAUTHN_RP_ID',
  'webauthn-rp-name': 'GATEHOUSE_WEBAUTHN_RP_NAME',
} as const;
type ValueFlag = keyof typeof VALUE_FLAGS;
export type FlagValues = Partial<Record<ValueFlag, string>> & { 'webauthn-origin'?: string[] };

const OPTIONS = {
  ...Object.fromEntries(Object.keys(VALUE_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
  'webauthn-origin': { type: 'string', multiple: true },
  'no-docs': { type: 'boolean' },
  'no-metrics': { type: 'boolean' },
} as const;

/** Flags beat their environment variables (API.md §8). Accepts `--flag value` and `--flag=value`. */
export function parseServeConfig(args: string[], env: Env): ServeConfig {
  const flags = parseFlags(args);
  const values: FlagValues = {};
  for (const [flag, variable] of Object.entries(VALUE_FLAGS) as [ValueFlag, string][]) {
    const value = flags[flag] ?? env[variable];
    if (value !== undefined && (flags[flag] !== undefined || value !== '')) values[flag] = value;
  }
  const origins = flags['webauthn-origin'] ?? (env.GATEHOUSE_WEBAUTHN_ORIGINS === undefined ? undefined : splitOrigins(env.GATEHOUSE_WEBAUTHN_ORIGINS));
  if (origins !== undefined) values['webauthn-origin'] = origins;
  const secret = sourceOf(flags, values, 'secret');
  const keysFile = values['keys-file'] === undefined ? null : nonEmpty('keys-file', values['keys-file']);
  // Either one secret or named keys: a secret left beside a keys file would be a key nobody manages.
  if (keysFile !== null && secret.kind !== 'none') throw new UsageError('give --keys-file or --secret/--secret-file, not both (check GATEHOUSE_KEYS_FILE, GATEHOUSE_SECRET and GATEHOUSE_SECRET_FILE too)');
  // The URLs carry passwords and the secrets sign: each may come from a file kept out of `ps`.
  for (const name of ['database-url', 'redis-url', 'webhook-secret', 'password-migration-secret'] as const) {
    const source = sourceOf(flags, values, name);
    if (source.kind === 'none') continue;
    values[name] = source.kind === 'file' ? readPrivateFile(nonEmpty(`${name}-file`, source.value)) : source.value;
  }
  return {
    port: parsePort(values.port ?? '4000'),
    host: nonEmpty('host', values.host ?? '127.0.0.1'),
    dir: nonEmpty('dir', values.dir ?? './gatehouse_data'),
    secret: secret.kind === 'value' ? checkSecret(secret.value, '--secret') : null,
    secretFile: secret.kind === 'file' ? nonEmpty('secret-file', secret.value) : null,
    keysFile,
    pwnedCheck: parseMode(values['pwned-check'] ?? 'online'),
    pwnedApiUrl: parseUrl('pwned-api-url', values['pwned-api-url'] ?? DEFAULT_PWNED_API_URL),
    docs: flags['no-docs'] !== true,
    ...featureFlags(values, { metrics: flags['no-metrics'] !== true, secretConfigured: secret.kind !== 'none' || keysFile !== null }),
    webhookTimingScale: parseScale(env.GATEHOUSE_WEBHOOK_TIMING_SCALE),
  };
}

function parseScale(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  const scale = Number(value);
  if (!(scale > 0 && scale <= 1)) throw new UsageError(`invalid GATEHOUSE_WEBHOOK_TIMING_SCALE '${value}': expected a number above 0, at most 1`);
  return scale;
}

type ParsedFlags = FlagValues & { 'no-docs'?: boolean; 'no-metrics'?: boolean };

function parseFlags(args: string[]): ParsedFlags {
  try {
    return parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values as ParsedFlags;
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = /'(--?[^' ]+)/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown argument '${flag}' (see 'gatehouse --help')`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`unexpected argument ${/'[^']*'/.exec(message)?.[0] ?? ''} (see 'gatehouse --help')`);
    if (/ambiguous/.test(message)) throw new UsageError(`${flag} needs a value (write ${flag}=-VALUE for one that starts with -)`);
    if (/argument missing/.test(message)) throw new UsageError(`${flag} needs a value`);
    throw new UsageError(message.split('\n')[0]!);
  }
}

type FromFile = 'secret' | 'database-url' | 'redis-url' | 'webhook-secret' | 'password-migration-secret';

/**
 * A credential comes as a value or as a file (`--<name>-file`, read under the secret file's rules),
 * never both from the same level; a flag beats either variable.
 */
function sourceOf(flags: ParsedFlags, values: FlagValues, name: FromFile): { kind: 'value' | 'file'; value: string } | { kind: 'none' } {
  const file = `${name}-file` as const;
  if (flags[name] !== undefined && flags[file] !== undefined) throw new UsageError(`give --${name} or --${file}, not both`);
  if (flags[name] !== undefined) return { kind: 'value', value: flags[name] };
  if (flags[file] !== undefined) return { kind: 'file', value: flags[file] };
  if (values[name] !== undefined && values[file] !== undefined) {
    throw new UsageError(`${VALUE_FLAGS[name]} and ${VALUE_FLAGS[file]} are both set; set one`);
  }
  if (values[name] !== undefined) return { kind: 'value', value: values[name] };
  if (values[file] !== undefined) return { kind: 'file', value: values[file] };
  return { kind: 'none' };
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

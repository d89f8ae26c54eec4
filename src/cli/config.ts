import { type BreachMode, DEFAULT_PWNED_API_URL } from '../security/breach-check';
import type { RelyingParty } from '../security/webauthn';
import { parseRelyingParty, splitOrigins } from './webauthn';

export interface ServeConfig {
  port: number;
  host: string;
  dir: string;
  secret: string | null;
  pwnedCheck: BreachMode;
  pwnedApiUrl: string;
  docs: boolean;
  /** Null when no --webauthn-rp-id is given: passkeys are off. */
  relyingParty: RelyingParty | null;
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
  'webauthn-rp-id': 'GATEHOUSE_WEBAUTHN_RP_ID',
  'webauthn-rp-name': 'GATEHOUSE_WEBAUTHN_RP_NAME',
  'webauthn-origin': 'GATEHOUSE_WEBAUTHN_ORIGINS',
};

/** Flags beat their environment variables (API.md §8). Accepts `--flag value` and `--flag=value`. */
export function parseServeConfig(args: string[], env: Env): ServeConfig {
  const values: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(FLAG_ENV)) {
    const value = env[variable];
    if (value !== undefined && value !== '') values[flag] = value;
  }
  let docs = true;
  // Repeatable: every --webauthn-origin counts, and any of them replaces the variable's list.
  const origins: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--no-docs') {
      docs = false;
      continue;
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const flag = match?.[1];
    if (flag === undefined || !(flag in FLAG_ENV)) throw new UsageError(`unknown argument '${arg}' (see 'gatehouse --help')`);
    const value = match?.[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${flag} needs a value`);
    if (flag === 'webauthn-origin') origins.push(value);
    else values[flag] = value;
  }
  return {
    port: parsePort(values.port ?? '4000'),
    host: nonEmpty('host', values.host ?? '127.0.0.1'),
    dir: nonEmpty('dir', values.dir ?? './gatehouse_data'),
    secret: values.secret === undefined ? null : parseSecret(values.secret),
    pwnedCheck: parseMode(values['pwned-check'] ?? 'online'),
    pwnedApiUrl: parseUrl(values['pwned-api-url'] ?? DEFAULT_PWNED_API_URL),
    docs,
    relyingParty: parseRelyingParty(
      {
        rpId: values['webauthn-rp-id'],
        rpName: values['webauthn-rp-name'],
        origins: origins.length > 0 ? origins : splitOrigins(values['webauthn-origin'] ?? ''),
      },
      (message) => {
        throw new UsageError(message);
      },
    ),
  };
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

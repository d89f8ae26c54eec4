import type { Logger } from '../http/log';
import type { Clock } from '../security/clock';
import { generateId } from '../security/random';
import { signedJsonPost } from '../security/webhook-signature';
import {
  HOOK_TIMEOUT_MS,
  type HookOutcome,
  hookBody,
  MAX_HOOK_ANSWER_BYTES,
  type MigrationHookTarget,
  type MigrationVerdict,
  readHookAnswer,
} from './model';

export interface PasswordMigrationDeps {
  /** Null: no `--password-migration-url`; every awaiting user's check then fails (API.md §19). */
  target: MigrationHookTarget | null;
  clock: Clock;
  log: Logger;
  /** Told how every call of the hook ended (for the metrics). */
  onOutcome?: (outcome: HookOutcome) => void;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface PasswordMigration {
  /** Asks the old system whether `password` is the user's; 'not_configured' when there is no hook. */
  check(user: { id: string; email: string | null }, password: string): Promise<MigrationVerdict | 'not_configured'>;
}

const MINUTE_MS = 60_000;

/** A line at most once a minute per kind, saying how many were held back since the last one. */
function occasionalLog(log: Logger, clock: Clock) {
  const last = new Map<string, { at: number; held: number }>();
  return (kind: string, fields: Record<string, unknown>) => {
    const seen = last.get(kind);
    const now = clock();
    if (seen !== undefined && now - seen.at < MINUTE_MS) {
      seen.held++;
      return;
    }
    log({ ...fields, ...(seen !== undefined && seen.held > 0 ? { repeated: seen.held } : {}) });
    last.set(kind, { at: now, held: 0 });
  };
}

/** The answer's text, or undefined past MAX_HOOK_ANSWER_BYTES (then the connection is dropped). */
async function readSmallAnswer(response: Response, controller: AbortController): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    read += value.byteLength;
    if (read > MAX_HOOK_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      controller.abort();
      return undefined;
    }
    chunks.push(value);
  }
}

/**
 * The password migration hook of API.md §19: one POST of `{user_id, email, password}`, signed as the
 * webhooks are (Standard Webhooks), answered within the timeout, redirects not followed. Nothing of
 * the request (its password above all) reaches a log line: those name the outcome only.
 */
export function createPasswordMigration(deps: PasswordMigrationDeps): PasswordMigration {
  const send = deps.fetch ?? fetch;
  const timeoutMs = deps.timeoutMs ?? HOOK_TIMEOUT_MS;
  const occasionally = occasionalLog(deps.log, deps.clock);

  const call = async (target: MigrationHookTarget, body: string): Promise<HookOutcome> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const id = `msg_${generateId()}`;
      const timestamp = Math.floor(deps.clock() / 1000);
      const response = await send(target.url, signedJsonPost(target.key, id, timestamp, body, controller.signal));
      const text = await readSmallAnswer(response, controller);
      if (response.status !== 200) return 'bad_status';
      const match = text === undefined ? undefined : readHookAnswer(text);
      if (match === undefined) return 'bad_answer';
      return match ? 'match' : 'no_match';
    } catch {
      // A network error's message repeats the URL, which may carry a token of the hook's; never the body.
      return controller.signal.aborted ? 'timeout' : 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    async check(user, password) {
      const target = deps.target;
      if (target === null) {
        occasionally('not_configured', {
          level: 'error',
          message: 'a password was checked for a user awaiting password migration, but no --password-migration-url is set: answered INCORRECT_PASSWORD',
        });
        return 'not_configured';
      }
      const outcome = await call(target, hookBody(user, password));
      deps.onOutcome?.(outcome);
      if (outcome === 'match' || outcome === 'no_match') return outcome;
      occasionally(outcome, { level: 'error', message: `the password migration hook gave no usable answer (${outcome}): answered UNAVAILABLE`, outcome });
      return 'unavailable';
    },
  };
}

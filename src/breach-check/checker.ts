import { AppError } from '../errors';
import { BoundedMap } from '../limits/bounded-map';
import commonPasswordsText from './common-passwords.txt' with { type: 'text' };

export type BreachMode = 'online' | 'offline' | 'off';
/** Where an answer came from: the Pwned Passwords API, the verdict cache, or the bundled list (offline mode, or the API unreachable). */
export type BreachAnswerSource = 'api' | 'cache' | 'fallback_list';
export const BREACH_ANSWER_SOURCES: readonly BreachAnswerSource[] = ['api', 'cache', 'fallback_list'];

export interface BreachChecker {
  isBreached(password: string): Promise<boolean>;
}

export interface BreachCheckOptions {
  mode: BreachMode;
  apiBaseUrl: string;
  timeoutMs?: number;
  log?: (message: string) => void;
  fetch?: typeof fetch;
  /** Told the source of every answer (for the metrics). */
  onAnswer?: (source: BreachAnswerSource) => void;
}

export const DEFAULT_PWNED_API_URL = 'https://api.pwnedpasswords.com';

const DEFAULT_TIMEOUT_MS = 2000;
/** Verdicts, not whole range answers: a range answer is ~800 lines, a verdict is one hash and a flag. */
const MAX_CACHED_VERDICTS = 10_000;
const RANGE_LINE = /^([0-9A-F]{35}):(\d+)$/i;

let commonPasswords: Set<string> | undefined;

/** Exact-match lookup in the bundled list of the 10,000 most common passwords. */
export function isCommonPassword(password: string): boolean {
  commonPasswords ??= new Set(
    commonPasswordsText.split(/\r?\n/).filter((line) => line.length > 0),
  );
  return commonPasswords.has(password);
}

export function createBreachChecker(options: BreachCheckOptions): BreachChecker {
  switch (options.mode) {
    case 'off':
      return { isBreached: async () => false };
    case 'offline': {
      const onAnswer = options.onAnswer ?? (() => {});
      return {
        isBreached: async (password) => {
          onAnswer('fallback_list');
          return isCommonPassword(password);
        },
      };
    }
    case 'online':
      return createOnlineChecker(options);
  }
}

/** Thrown for any API failure; its message is safe to log (never holds the password or hash). */
class RangeQueryError extends Error {}

function createOnlineChecker(options: BreachCheckOptions): BreachChecker {
  const baseUrl = options.apiBaseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const log = options.log ?? ((message: string) => console.warn(message));
  const onAnswer = options.onAnswer ?? (() => {});
  const verdicts = new BoundedMap<boolean>(MAX_CACHED_VERDICTS);
  const inFlight = new Map<string, Promise<Set<string>>>();

  /** Concurrent checks under one prefix share a request; the answer is dropped once they have it. */
  const breachedSuffixes = (prefix: string): Promise<Set<string>> => {
    const pending = inFlight.get(prefix);
    if (pending) return pending;
    const query = queryRange(baseUrl, prefix, timeoutMs, options.fetch ?? fetch).finally(() => inFlight.delete(prefix));
    inFlight.set(prefix, query);
    return query;
  };

  return {
    async isBreached(password) {
      const hash = sha1Hex(password);
      const cached = verdicts.get(hash);
      if (cached !== undefined) {
        onAnswer('cache');
        return cached;
      }
      try {
        const breached = (await breachedSuffixes(hash.slice(0, 5))).has(hash.slice(5));
        verdicts.set(hash, breached);
        onAnswer('api');
        return breached;
      } catch (error) {
        const reason = error instanceof RangeQueryError ? error.message : 'unexpected error';
        log(`breach check: Pwned Passwords API unavailable (${reason}); using bundled common-password list`);
        onAnswer('fallback_list');
        return isCommonPassword(password);
      }
    },
  };
}

function sha1Hex(text: string): string {
  return new Bun.CryptoHasher('sha1').update(text).digest('hex').toUpperCase();
}

async function queryRange(
  baseUrl: string,
  prefix: string,
  timeoutMs: number,
  fetchFn: typeof fetch,
): Promise<Set<string>> {
  // One signal covers both the response headers and the body download.
  const signal = AbortSignal.timeout(timeoutMs);
  let body: string;
  try {
    const response = await fetchFn(`${baseUrl}/range/${prefix}`, {
      headers: { 'Add-Padding': 'true' },
      signal,
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw new RangeQueryError(`HTTP ${response.status}`);
    }
    body = await response.text();
  } catch (error) {
    if (error instanceof RangeQueryError) throw error;
    // Network error messages may echo the URL, which contains the hash prefix, so they are not logged.
    throw new RangeQueryError(signal.aborted ? `timeout after ${timeoutMs} ms` : 'network error');
  }
  return parseRangeBody(body);
}

function parseRangeBody(body: string): Set<string> {
  const suffixes = new Set<string>();
  let lines = 0;
  for (const rawLine of body.split('\n')) {
    const line = rawLine.trim();
    if (line === '') continue;
    const match = RANGE_LINE.exec(line);
    if (!match) throw new RangeQueryError('malformed response body');
    // Count 0 marks an Add-Padding decoy line, not a breached password.
    if (Number(match[2]) > 0) suffixes.add(match[1]!.toUpperCase());
    lines++;
  }
  // With Add-Padding every real answer lists hundreds of lines; an empty 200 (a proxy, a stub) is not an answer.
  if (lines === 0) throw new RangeQueryError('empty response body');
  return suffixes;
}

/** Strength-checked passwords found in the breach corpus are WEAK_PASSWORD (seed-spec, Data types). */
export async function rejectBreached(breach: BreachChecker, password: string): Promise<void> {
  if (await breach.isBreached(password)) throw new AppError('WEAK_PASSWORD');
}

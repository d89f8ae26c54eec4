import { t } from 'elysia';
import { DOCUMENTED_AS } from './fields';

// Query parameters of the lists (API.md §9): a bad value falls back to its default, never 400.

/**
 * Unknown, not String: a repeated or odd parameter must fall back to its default, never fail
 * validation. The document still states each parameter's type and values.
 */
export const fallingBack = (documented: Record<string, unknown>, description: string, example: string | number) =>
  t.Optional(t.Unknown({ [DOCUMENTED_AS]: documented, description: `${description}. Any other value falls back to the default`, examples: [example] }));

/**
 * Digit strings ≥ 1 only, clamped to `max`; anything else falls back (API.md §9: a list query
 * never answers 400). A huge digit string is still a page past the end or a capped per_page.
 */
export function positiveInteger(value: string | null, fallback: number, max: number): number {
  if (value === null || !/^[0-9]+$/.test(value)) return fallback;
  const n = Number(value);
  return n >= 1 ? Math.min(n, max) : fallback;
}

/** A parameter given more than once is as invalid as a malformed one, so it falls back too. */
export function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  return values.length === 1 ? values[0]! : null;
}

/**
 * One raw query value decoded as URLSearchParams decodes it ('+' is a space), for a caller that reads
 * a known query string without parsing it all; undefined for a malformed escape or one that is not
 * UTF-8, where the two could differ (the caller then parses the usual way).
 */
export function decodeQueryValue(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.includes('+') ? raw.replaceAll('+', ' ') : raw);
  } catch {
    return undefined;
  }
}

import { normalizeEmail } from '../security/email-address';
import type { ListOptions } from './repository';

const MAX_PER_PAGE = 1000;
/** Keeps (page - 1) * per_page an exact integer; any page this far out is empty anyway. */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_PER_PAGE);

/**
 * Digit strings ≥ 1 only, clamped to `max`; anything else falls back (API.md §9: a list query
 * never answers 400). A huge digit string is still a page past the end or a capped per_page.
 */
function positiveInteger(value: string | null, fallback: number, max: number): number {
  if (value === null || !/^[0-9]+$/.test(value)) return fallback;
  const n = Number(value);
  return n >= 1 ? Math.min(n, max) : fallback;
}

/** A parameter given more than once is as invalid as a malformed one, so it falls back too. */
function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  return values.length === 1 ? values[0]! : null;
}

export function parseListQuery(params: URLSearchParams): ListOptions {
  const emailQuery = single(params, 'email_query');
  return {
    sortBy: single(params, 'sort_by') === 'id' ? 'id' : 'created_at',
    ascending: single(params, 'sort_order') !== 'descending',
    perPage: positiveInteger(single(params, 'per_page'), 20, MAX_PER_PAGE),
    page: positiveInteger(single(params, 'page'), 1, MAX_PAGE),
    emailQuery: emailQuery === null || emailQuery === '' ? null : normalizeEmail(emailQuery),
  };
}

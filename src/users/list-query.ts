import type { ListOptions } from './repository';

export const MAX_PER_PAGE = 1000;
/** Keeps (page - 1) * per_page an exact integer; any page this far out is empty anyway. */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_PER_PAGE);

/** Digit strings ≥ 1 only; anything else falls back (API.md §9: a list query never answers 400). */
function positiveInteger(value: unknown, fallback: number): number {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value)) return fallback;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
}

export function parseListQuery(query: Record<string, unknown>): ListOptions {
  const emailQuery = typeof query.email_query === 'string' && query.email_query !== '' ? query.email_query : null;
  return {
    sortBy: query.sort_by === 'id' ? 'id' : 'created_at',
    ascending: query.sort_order !== 'descending',
    perPage: Math.min(positiveInteger(query.per_page, 20), MAX_PER_PAGE),
    page: Math.min(positiveInteger(query.page, 1), MAX_PAGE),
    emailQuery: emailQuery?.toLowerCase() ?? null,
  };
}

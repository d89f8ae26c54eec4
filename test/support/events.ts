import type { Database } from 'bun:sqlite';
import { expect } from 'bun:test';

export interface EventRow {
  id: number;
  time: number;
  type: string;
  user_id: string | null;
  client_ip: string | null;
}

/** Every stored event, oldest first, read from the table itself rather than through the API. */
export const storedEvents = (sqlite: Database): EventRow[] => sqlite.query<EventRow, []>('select * from events order by id').all();

/** Reads the events appended by `action`, as `type user client_ip` lines for short expectations. */
export async function eventsDuring(sqlite: Database, action: () => Promise<unknown>): Promise<EventRow[]> {
  const before = storedEvents(sqlite).at(-1)?.id ?? 0;
  await action();
  return storedEvents(sqlite).filter((event) => event.id > before);
}

export const summary = (events: EventRow[]) => events.map((e) => [e.type, e.user_id, e.client_ip]);

/**
 * No stored event (nor any other text: pass the webhook bodies too) holds any of the given secrets,
 * compared case-insensitively because codes are accepted in either case.
 */
export function expectNoneOf(texts: string[], secrets: string[]): void {
  const haystack = texts.join('\n').toLowerCase();
  for (const secret of secrets.filter((s) => s.length >= 6)) {
    expect({ secret, found: haystack.includes(secret.toLowerCase()) }).toEqual({ secret, found: false });
  }
}

/** Every column of every row of every table whose name starts with the prefix, as text. */
export function tableTexts(sqlite: Database, tables: string[]): string[] {
  return tables.flatMap((table) => sqlite.query<Record<string, unknown>, []>(`select * from "${table}"`).all().map((row) => JSON.stringify(row)));
}

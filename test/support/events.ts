import { expect } from 'bun:test';
import type { Harness } from './harness';
import { execute, rowsOf } from './rows';

export interface EventRow {
  id: number;
  time: number;
  type: string;
  user_id: string | null;
  client_ip: string | null;
}

/** Every stored event, oldest first, read from the table itself rather than through the API. */
export async function storedEvents(h: Harness): Promise<EventRow[]> {
  const rows = await rowsOf(h, 'events');
  return rows.map((row) => ({ id: row.id, time: row.time, type: row.type, user_id: row.userId, client_ip: row.clientIp })).sort((a, b) => a.id - b.id);
}

/** Reads the events appended by `action`, as `type user client_ip` lines for short expectations. */
export async function eventsDuring(h: Harness, action: () => Promise<unknown>): Promise<EventRow[]> {
  const before = (await storedEvents(h)).at(-1)?.id ?? 0;
  await action();
  return (await storedEvents(h)).filter((event) => event.id > before);
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

/** Every column of every row of the tables, as text. */
export async function tableTexts(h: Harness, tables: string[]): Promise<string[]> {
  const rows = await Promise.all(tables.map((table) => execute(h, `select * from "${table}"`)));
  return rows.flat().map((row) => JSON.stringify(row));
}

/** Makes every insert into the events table fail until `allowEvents`: a change must then fail with it. */
export async function refuseEvents(h: Harness): Promise<void> {
  if (h.backend.kind === 'sqlite') {
    await execute(h, "create trigger refuse_events before insert on events begin select raise(abort, 'events refused'); end");
    return;
  }
  await execute(h, "create function refuse_events() returns trigger language plpgsql as $$ begin raise exception 'events refused'; end $$");
  await execute(h, 'create trigger refuse_events before insert on events for each row execute function refuse_events()');
}

export async function allowEvents(h: Harness): Promise<void> {
  await execute(h, h.backend.kind === 'sqlite' ? 'drop trigger refuse_events' : 'drop trigger refuse_events on events');
}

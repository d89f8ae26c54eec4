import { and, eq, getTableName, is, sql, Table, type SQL } from 'drizzle-orm';
import * as pgSchema from '../../src/db/pg-schema';
import * as sqliteSchema from '../../src/db/schema';
import type { Harness } from './harness';
import { generateId } from '../../src/security/random';

/**
 * Stored rows as the tests look at them, on whichever database the harness runs (SQLite or
 * PostgreSQL): read and written through Drizzle with each database's own schema, so both give the
 * same field names and types (camelCase, booleans, numbers).
 */
export type TableName = {
  [K in keyof typeof sqliteSchema]: (typeof sqliteSchema)[K] extends Table ? K : never;
}[keyof typeof sqliteSchema];
export type Row = Record<string, any>;

type AnyTable = Table & Record<string, any>;
const tableOf = (h: Harness, name: TableName): AnyTable =>
  (h.backend.kind === 'sqlite' ? sqliteSchema[name] : pgSchema[name]) as unknown as AnyTable;

const matching = (table: AnyTable, where: Row): SQL | undefined =>
  and(...Object.entries(where).map(([column, value]) => eq(table[column], value)));

/** Numeric ids (events) in their order, anything else by its content: the same order on both databases. */
const byIdOrContent = (a: Row, b: Row): number =>
  typeof a.id === 'number' && typeof b.id === 'number' ? a.id - b.id : JSON.stringify(a) < JSON.stringify(b) ? -1 : 1;

/** Rows of a table, optionally only those whose columns equal `where`, in a stable order. */
export async function rowsOf(h: Harness, name: TableName, where: Row = {}): Promise<Row[]> {
  await h.ready;
  const table = tableOf(h, name);
  const { backend } = h;
  const rows =
    backend.kind === 'sqlite'
      ? backend.db.select().from(table as never).where(matching(table, where)).all()
      : await backend.db.select().from(table as never).where(matching(table, where));
  return (rows as Row[]).sort(byIdOrContent);
}

export const rowOf = async (h: Harness, name: TableName, where: Row): Promise<Row | undefined> => (await rowsOf(h, name, where))[0];

/** Inserts rows (in batches, one transaction on SQLite). */
export async function insertRows(h: Harness, name: TableName, rows: Row[]): Promise<void> {
  await h.ready;
  const table = tableOf(h, name);
  const { backend } = h;
  const batches = Array.from({ length: Math.ceil(rows.length / 200) }, (_, i) => rows.slice(i * 200, i * 200 + 200));
  if (backend.kind === 'sqlite') backend.db.transaction((tx) => batches.forEach((batch) => tx.insert(table as never).values(batch as never).run()));
  else for (const batch of batches) await backend.db.insert(table as never).values(batch as never);
}

export async function updateRows(h: Harness, name: TableName, set: Row, where: Row): Promise<void> {
  await h.ready;
  const table = tableOf(h, name);
  const { backend } = h;
  if (backend.kind === 'sqlite') backend.db.update(table as never).set(set as never).where(matching(table, where)).run();
  else await backend.db.update(table as never).set(set as never).where(matching(table, where));
}

/** Every table of the schema by its SQL name, except `except`: for before/after comparisons. */
export async function snapshot(h: Harness, except: string[] = []): Promise<Record<string, Row[]>> {
  const names = (Object.keys(sqliteSchema) as (keyof typeof sqliteSchema)[]).filter((key) => is(sqliteSchema[key], Table)) as TableName[];
  const entries = await Promise.all(
    names.filter((name) => !except.includes(getTableName(sqliteSchema[name] as Table))).map(async (name) => [getTableName(sqliteSchema[name] as Table), await rowsOf(h, name)] as const),
  );
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

/** One statement on either database, `?` for parameters; for what the helpers above cannot say. */
export async function execute(h: Harness, text: string, ...params: unknown[]): Promise<Row[]> {
  await h.ready;
  const { backend } = h;
  if (backend.kind === 'sqlite') return backend.db.$client.query(text).all(...(params as never[])) as Row[];
  let n = 0;
  return [...(await backend.db.$client.unsafe(text.replace(/\?/g, () => `$${++n}`), params as never[]))] as Row[];
}

export { sql };

/**
 * 5,000 users (`user<i>@example.com`, created_at i) and fresh planner statistics: enough rows that a
 * sequential scan would cost more than an index, so a query plan's choice means something.
 */
export async function insertUsersForQueryPlans(h: Harness): Promise<void> {
  const rows = Array.from({ length: 5000 }, (_, i) => ({ id: generateId(), createdAt: i, email: `user${i}@example.com`, passwordHash: 'h', recoveryCodeHash: 'r' }));
  for (let i = 0; i < rows.length; i += 1000) await insertRows(h, 'users', rows.slice(i, i + 1000));
  await execute(h, h.backend.kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE users');
}

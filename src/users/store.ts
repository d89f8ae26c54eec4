import { and, asc, type Column, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { isUniqueViolation } from '../db/constraints';
import { snapshotQuery } from '../db/read-snapshot';
import { counters, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import { toUserView, type ListOptions, type UserView, type UserViewColumns } from './model';

/** A user as stored, with its hashes; never leaves the service layer. */
export interface UserRecord {
  id: string;
  createdAt: number;
  email: string | null;
  emailVerified: boolean;
  passwordHash: string;
  recoveryCodeHash: string;
  /** API.md §14; read it through isDisabled (users/model.ts), since a passed `disabledUntil` means enabled. */
  disabled: boolean;
  disabledUntil: number | null;
}

export interface UserPage {
  items: UserView[];
  total: number;
  more: boolean;
}

/** The exact address alone (API.md §14): the unique index holds at most one user, so one lookup is the page and the count. */
export const isExactLookup = (options: ListOptions): options is ListOptions & { email: string } =>
  options.email !== null && options.email !== 'none' && options.emailQuery === null && options.after === null;
export const exactPage = (user: UserView | undefined, options: ListOptions): UserPage =>
  user === undefined ? { items: [], total: 0, more: false } : { items: options.page === 1 ? [user] : [], total: 1, more: false };

/** The page's values for a prepared page query: one row more than the page shows whether another follows. */
export const pageValues = (options: ListOptions) => ({
  query: options.emailQuery,
  email: options.email,
  limit: options.perPage + 1,
  offset: options.after === null ? (options.page - 1) * options.perPage : 0,
  afterCreatedAt: options.after?.createdAt ?? null,
  afterId: options.after?.id ?? null,
});

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface UserStore {
  /** `now` decides whether a `disabled_until` has passed. SQLite answers at once: the hottest read then needs no await (src/http/handler.ts). */
  findView(id: string, now: number): UserView | undefined | Promise<UserView | undefined>;
  /** `email` already normalised; answers at once on SQLite, as findView does. */
  findViewByEmail(email: string, now: number): UserView | undefined | Promise<UserView | undefined>;
  find(id: string): Promise<UserRecord | undefined>;
  /** `email` already normalised. */
  findByEmail(email: string): Promise<UserRecord | undefined>;
  /** False when another user holds the email: the unique index settles a race for it. */
  insert(user: UserRecord, events: EventDraft[]): Promise<boolean>;
  /** Requests, TOTP credential and everything else of the user go with it. False when there was none. */
  delete(id: string, events: EventDraft[]): Promise<boolean>;
  /** Disables the user until `until` (null: until enabled), replacing any earlier state. False when there was none. */
  disable(id: string, until: number | null, events: EventDraft[]): Promise<boolean>;
  /** Enables a user disabled at `now`, with its events; 'unchanged' (no events) when it was enabled already. */
  enable(id: string, now: number, events: EventDraft[]): Promise<'enabled' | 'unchanged' | 'gone'>;
  /** One page, the size of the (filtered) set, and whether a page follows this one. */
  list(options: ListOptions, now: number): Promise<UserPage>;
}

const viewColumns = {
  id: users.id,
  createdAt: users.createdAt,
  email: users.email,
  emailVerified: users.emailVerified,
  // On the row, kept by migration 0011's triggers: the view is one primary-key read (no subqueries).
  registeredTotp: users.registeredTotp,
  passkeyCount: users.passkeyCount,
  disabled: users.disabled,
  disabledUntil: users.disabledUntil,
};
/** A view's row as bun:sqlite answers it, by column name (booleans as 0 or 1). */
export interface ViewRow {
  id: string;
  created_at: number;
  email: string | null;
  email_verified: number;
  registered_totp: number;
  passkey_count: number;
  disabled: number;
  disabled_until: number | null;
}
/** `id` and `createdAt` apart, for rows that name them otherwise (the API-key store's owner columns). */
export const viewColumnsOf = (row: Omit<ViewRow, 'id' | 'created_at'>, id: string, createdAt: number): UserViewColumns => ({
  id,
  createdAt,
  email: row.email,
  emailVerified: row.email_verified === 1,
  registeredTotp: row.registered_totp,
  passkeyCount: row.passkey_count,
  disabled: row.disabled === 1,
  disabledUntil: row.disabled_until,
});
// instr() instead of LIKE, so `%` and `_` in the query are literal characters.
const emailContains = sql`instr(${users.email}, ${sql.placeholder('query')}) > 0`;
const emailIs = eq(users.email, sql.placeholder('email'));
/** Exact address (API.md §14) through users_email_unique, and/or the substring filter. */
const listFilter = (options: Pick<ListOptions, 'email' | 'emailQuery'>) =>
  and(options.email === null ? undefined : emailIs, options.emailQuery === null ? undefined : emailContains);
/**
 * Keyset paging (API.md §20): after the cursor's user in the sort order, as a row-value comparison
 * on the very columns (and index) the order uses, so a page's cost does not grow with its depth.
 * Each engine passes its own table's columns.
 */
export function afterCursor(options: ListOptions, columns: { id: Column; createdAt: Column }) {
  if (options.after === null) return undefined;
  const beyond = options.ascending ? sql.raw('>') : sql.raw('<');
  const afterId = sql.placeholder('afterId');
  return options.sortBy === 'id'
    ? sql`${columns.id} ${beyond} ${afterId}`
    : sql`(${columns.createdAt}, ${columns.id}) ${beyond} (${sql.placeholder('afterCreatedAt')}, ${afterId})`;
}
/** The user's state is in force: a passed disabled_until is enabled already (API.md §14). */
const disabledAt = (now: number) => and(eq(users.disabled, true), or(isNull(users.disabledUntil), gt(users.disabledUntil, now)));

/** Exported for the query-plan test (test/users-email-lookup.test.ts). */
export function preparePage(db: Db, options: ListOptions) {
  const direction = options.ascending ? asc : desc;
  const order = options.sortBy === 'id' ? [direction(users.id)] : [direction(users.createdAt), direction(users.id)];
  return db
    .select(viewColumns)
    .from(users)
    .where(and(listFilter(options), afterCursor(options, users)))
    .orderBy(...order)
    .limit(sql.placeholder('limit')).offset(sql.placeholder('offset'))
    .prepare();
}

export function prepareCount(db: Db, options: ListOptions) {
  return db.select({ n: sql<number>`count(*)` }).from(users).where(listFilter(options)).prepare();
}

/** Queries are prepared once per database: these run on every request that names a user. */
export function sqliteUserStore(db: Db, append: AppendEvents): UserStore {
  // The hottest reads: Drizzle writes the SQL once and bun:sqlite runs it (Drizzle's per-call placeholders and
  // mapping cost about 2 µs), in the turn's shared read transaction; get(), not values(): one step less.
  const viewSql = db.select(viewColumns).from(users).where(eq(users.id, sql.placeholder('id'))).toSQL().sql;
  const viewById = snapshotQuery<ViewRow, [string]>(db.$client, viewSql);
  const viewByEmail = snapshotQuery<ViewRow, [string]>(db.$client, db.select(viewColumns).from(users).where(emailIs).toSQL().sql);
  const viewOf = (row: ViewRow | null, now: number) => (row === null ? undefined : toUserView(viewColumnsOf(row, row.id, row.created_at), now));
  const rowById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  const rowByEmail = db.select().from(users).where(eq(users.email, sql.placeholder('email'))).prepare();
  const total = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare();
  const counts = new Map<string, ReturnType<typeof prepareCount>>();
  const matching = (options: ListOptions) => {
    const key = `${options.emailQuery !== null} ${options.email !== null}`;
    let query = counts.get(key);
    if (query === undefined) counts.set(key, (query = prepareCount(db, options)));
    return query;
  };
  // Building a query's SQL costs Drizzle more than running it; the list has 32 shapes, each prepared on first use.
  const pages = new Map<string, ReturnType<typeof preparePage>>();
  const page = (options: ListOptions) => {
    const key = `${options.sortBy} ${options.ascending} ${options.emailQuery !== null} ${options.email !== null} ${options.after !== null}`;
    let query = pages.get(key);
    if (query === undefined) pages.set(key, (query = preparePage(db, options)));
    return query;
  };

  return {
    findView: (id, now) => viewOf(viewById.get(id), now),
    findViewByEmail: (email, now) => viewOf(viewByEmail.get(email), now),
    find: async (id) => rowById.get({ id }),
    findByEmail: async (email) => rowByEmail.get({ email }),
    async insert(user, events) {
      try {
        db.transaction((tx) => {
          tx.insert(users).values(user).run();
          append(tx, events);
        });
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    },
    async delete(id, events) {
      return db.transaction((tx) => {
        const deleted = tx.delete(users).where(eq(users.id, id)).returning({ id: users.id }).get();
        if (deleted !== undefined) append(tx, events);
        return deleted !== undefined;
      });
    },
    async disable(id, until, events) {
      return db.transaction((tx) => {
        const changed = tx.update(users).set({ disabled: true, disabledUntil: until }).where(eq(users.id, id)).returning({ id: users.id }).get();
        if (changed !== undefined) append(tx, events);
        return changed !== undefined;
      });
    },
    async enable(id, now, events) {
      return db.transaction((tx) => {
        const changed = tx.update(users).set({ disabled: false, disabledUntil: null }).where(and(eq(users.id, id), disabledAt(now))).returning({ id: users.id }).get();
        if (changed !== undefined) {
          append(tx, events);
          return 'enabled';
        }
        return tx.select({ id: users.id }).from(users).where(eq(users.id, id)).get() === undefined ? 'gone' : 'unchanged';
      });
    },
    async list(options, now) {
      if (options.email === 'none') return { items: [], total: 0, more: false };
      if (isExactLookup(options)) return exactPage(viewOf(viewByEmail.get(options.email), now), options);
      const filters = { query: options.emailQuery, email: options.email };
      const rows = page(options).all(pageValues(options));
      const items = rows.slice(0, options.perPage).map((row) => toUserView(row, now));
      const count = options.emailQuery === null && options.email === null ? total.get()?.value : matching(options).get(filters)?.n;
      return { items, total: count ?? 0, more: rows.length > options.perPage };
    },
  };
}

/** The columns of a user's view, for stores that answer a user with their own rows (api-keys). */
export { viewColumns as userViewColumns };

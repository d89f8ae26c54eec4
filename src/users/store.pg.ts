import { and, asc, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { isUniqueViolation } from '../db/pg-errors';
import { inTransaction } from '../db/pg-transaction';
import { counters, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import { toUserView, type ListOptions } from './model';
import { afterCursor, exactPage, isExactLookup, pageValues, type UserStore } from './store';

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
// strpos() instead of LIKE, so `%` and `_` in the query are literal characters.
const emailContains = sql`strpos(${users.email}, ${sql.placeholder('query')}) > 0`;
const emailIs = eq(users.email, sql.placeholder('email'));
/** Exact address (API.md §14) through users_email_unique, and/or the substring filter. */
const listFilter = (options: Pick<ListOptions, 'email' | 'emailQuery'>) =>
  and(options.email === null ? undefined : emailIs, options.emailQuery === null ? undefined : emailContains);
/** The user's state is in force: a passed disabled_until is enabled already (API.md §14). */
const disabledAt = (now: number) => and(eq(users.disabled, true), or(isNull(users.disabledUntil), gt(users.disabledUntil, now)));

/** Exported for the query-plan test (test/users-email-lookup.test.ts). */
export function preparePage(db: PgDb, options: ListOptions, name: string) {
  const direction = options.ascending ? asc : desc;
  const order = options.sortBy === 'id' ? [direction(users.id)] : [direction(users.createdAt), direction(users.id)];
  return db
    .select(viewColumns)
    .from(users)
    .where(and(listFilter(options), afterCursor(options, users)))
    .orderBy(...order)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare(name);
}

export function prepareCount(db: PgDb, options: ListOptions, name: string) {
  return db.select({ n: sql<number>`count(*)::int` }).from(users).where(listFilter(options)).prepare(name);
}

/** The PostgreSQL twin of sqliteUserStore; the queries every request runs are prepared once. */
export function postgresUserStore(db: PgDb, append: AppendEventsPg): UserStore {
  const viewById = db.select(viewColumns).from(users).where(eq(users.id, sql.placeholder('id'))).prepare('user_view_by_id');
  const rowById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare('user_by_id');
  const rowByEmail = db.select().from(users).where(eq(users.email, sql.placeholder('email'))).prepare('user_by_email');
  const viewByEmail = db.select(viewColumns).from(users).where(eq(users.email, sql.placeholder('email'))).prepare('user_view_by_email');
  const viewForEmail = async (email: string, now: number) => {
    const [row] = await viewByEmail.execute({ email });
    return row && toUserView(row, now);
  };
  const total = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare('users_total');
  const counts = new Map<string, ReturnType<typeof prepareCount>>();
  const matching = (options: ListOptions) => {
    const key = `${options.emailQuery !== null ? 'filtered' : 'all'}${options.email !== null ? '_exact' : ''}`;
    let query = counts.get(key);
    if (query === undefined) counts.set(key, (query = prepareCount(db, options, `users_matching_${key}`)));
    return query;
  };
  const pages = new Map<string, ReturnType<typeof preparePage>>();
  const page = (options: ListOptions) => {
    const key = `${options.sortBy}_${options.ascending ? 'asc' : 'desc'}_${options.emailQuery !== null ? 'filtered' : 'all'}${options.email !== null ? '_exact' : ''}${options.after !== null ? '_after' : ''}`;
    let query = pages.get(key);
    if (query === undefined) pages.set(key, (query = preparePage(db, options, `users_page_${key}`)));
    return query;
  };

  return {
    async findView(id, now) {
      const [row] = await viewById.execute({ id });
      return row && toUserView(row, now);
    },
    findViewByEmail: viewForEmail,
    find: async (id) => (await rowById.execute({ id }))[0],
    findByEmail: async (email) => (await rowByEmail.execute({ email }))[0],
    async insert(user, events) {
      try {
        await inTransaction(db, async (tx) => {
          await tx.insert(users).values(user);
          await append(tx, events);
        });
        return true;
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_unique')) return false;
        throw error;
      }
    },
    // The DELETE is the first statement: it locks the user row, then its cascade the user's other rows.
    delete: (id, events) =>
      inTransaction(db, async (tx) => {
        const deleted = await tx.delete(users).where(eq(users.id, id)).returning({ id: users.id });
        if (deleted.length > 0) await append(tx, events);
        return deleted.length > 0;
      }),
    // Each UPDATE of the user row is the transaction's first statement: the user is locked first.
    disable: (id, until, events) =>
      inTransaction(db, async (tx) => {
        const changed = await tx.update(users).set({ disabled: true, disabledUntil: until }).where(eq(users.id, id)).returning({ id: users.id });
        if (changed.length > 0) await append(tx, events);
        return changed.length > 0;
      }),
    enable: (id, now, events) =>
      inTransaction(db, async (tx) => {
        // The row lock of the update makes a parallel enable wait, then find nothing to change: one event.
        const changed = await tx.update(users).set({ disabled: false, disabledUntil: null }).where(and(eq(users.id, id), disabledAt(now))).returning({ id: users.id });
        if (changed.length > 0) {
          await append(tx, events);
          return 'enabled' as const;
        }
        const [exists] = await tx.select({ id: users.id }).from(users).where(eq(users.id, id));
        return exists === undefined ? ('gone' as const) : ('unchanged' as const);
      }),
    async list(options, now) {
      if (options.email === 'none') return { items: [], total: 0, more: false };
      if (isExactLookup(options)) return exactPage(await viewForEmail(options.email, now), options);
      const filters = { query: options.emailQuery, email: options.email };
      const [rows, counted] = await Promise.all([
        page(options).execute(pageValues(options)),
        options.emailQuery === null && options.email === null ? total.execute() : matching(options).execute(filters),
      ]);
      const first = counted[0] as { value?: number; n?: number } | undefined;
      const items = rows.slice(0, options.perPage).map((row) => toUserView(row, now));
      return { items, total: first?.value ?? first?.n ?? 0, more: rows.length > options.perPage };
    },
  };
}

/** The columns of a user's view, for stores that answer a user with their own rows (api-keys). */
export { viewColumns as userViewColumns };

import { asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { counters, totpCredentials, users, type UserRow } from '../db/schema';

export interface UserView {
  id: string;
  created_at: number;
  email: string | null;
  email_verified: boolean;
  registered_totp: boolean;
}

const registeredTotp = sql<number>`exists(select 1 from ${totpCredentials} where ${totpCredentials.userId} = ${users.id})`;

const userColumns = {
  id: users.id,
  createdAt: users.createdAt,
  email: users.email,
  emailVerified: users.emailVerified,
  registeredTotp,
};
type UserColumns = { id: string; createdAt: number; email: string | null; emailVerified: boolean; registeredTotp: number };

const toUserView = (row: UserColumns): UserView => ({
  id: row.id,
  created_at: row.createdAt,
  email: row.email,
  email_verified: row.emailVerified,
  registered_totp: Boolean(row.registeredTotp),
});

/** Prepared once per database: these run on every request that names a user. */
export function userQueries(db: Db) {
  const viewById = db.select(userColumns).from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  const rowById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  const rowByEmail = db.select().from(users).where(eq(users.email, sql.placeholder('email'))).prepare();
  const total = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare();
  const matching = db.select({ n: sql<number>`count(*)` }).from(users).where(emailContains).prepare();
  // Building a query's SQL costs Drizzle more than running it; the list has eight shapes, each prepared on first use.
  const pages = new Map<string, ReturnType<typeof preparePage>>();
  const page = (options: ListOptions) => {
    const key = `${options.sortBy} ${options.ascending} ${options.emailQuery !== null}`;
    let query = pages.get(key);
    if (query === undefined) pages.set(key, (query = preparePage(db, options)));
    return query;
  };
  return {
    findView: (id: string): UserView | undefined => {
      const row = viewById.get({ id });
      return row && toUserView(row);
    },
    findRow: (id: string): UserRow | undefined => rowById.get({ id }),
    findRowByEmail: (email: string): UserRow | undefined => rowByEmail.get({ email }),
    /** False when the user no longer exists: deleted while a hash was being computed. */
    update: (id: string, changes: Partial<Omit<UserRow, 'id'>>): boolean =>
      db.update(users).set(changes).where(eq(users.id, id)).returning({ id: users.id }).get() !== undefined,
    total: (): number => total.get()?.value ?? 0,
    /** Users whose email contains `query` (already lower-cased). */
    countMatching: (query: string): number => matching.get({ query })?.n ?? 0,
    listPage: (options: ListOptions): UserView[] =>
      page(options)
        .all({ query: options.emailQuery, limit: options.perPage, offset: (options.page - 1) * options.perPage })
        .map(toUserView),
  };
}
export type UserQueries = ReturnType<typeof userQueries>;

export interface ListOptions {
  sortBy: 'created_at' | 'id';
  ascending: boolean;
  perPage: number;
  page: number;
  emailQuery: string | null;
}

// instr() instead of LIKE, so `%` and `_` in the query are literal characters.
const emailContains = sql`instr(${users.email}, ${sql.placeholder('query')}) > 0`;

function preparePage(db: Db, options: ListOptions) {
  const direction = options.ascending ? asc : desc;
  const order = options.sortBy === 'id' ? [direction(users.id)] : [direction(users.createdAt), direction(users.id)];
  return db
    .select(userColumns)
    .from(users)
    .where(options.emailQuery === null ? undefined : emailContains)
    .orderBy(...order)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare();
}

export function listUsers(queries: UserQueries, options: ListOptions): { items: UserView[]; total: number } {
  const items = queries.listPage(options);
  const total = options.emailQuery === null ? queries.total() : queries.countMatching(options.emailQuery);
  return { items, total };
}

import { and, asc, desc, eq, sql } from 'drizzle-orm';
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

export const toUserView = (row: UserColumns): UserView => ({
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
  return {
    findView: (id: string): UserView | undefined => {
      const row = viewById.get({ id });
      return row && toUserView(row);
    },
    findRow: (id: string): UserRow | undefined => rowById.get({ id }),
    findRowByEmail: (email: string): UserRow | undefined => rowByEmail.get({ email }),
    total: (): number => total.get()?.value ?? 0,
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

export function listUsers(db: Db, queries: UserQueries, options: ListOptions): { items: UserView[]; total: number } {
  // instr() instead of LIKE, so `%` and `_` in the query are literal characters.
  const filter = options.emailQuery === null ? undefined : sql`instr(${users.email}, ${options.emailQuery}) > 0`;
  const direction = options.ascending ? asc : desc;
  const order = options.sortBy === 'id' ? [direction(users.id)] : [direction(users.createdAt), direction(users.id)];
  const items = db
    .select(userColumns)
    .from(users)
    .where(and(filter))
    .orderBy(...order)
    .limit(options.perPage)
    .offset((options.page - 1) * options.perPage)
    .all()
    .map(toUserView);
  const total =
    filter === undefined
      ? queries.total()
      : (db.select({ n: sql<number>`count(*)` }).from(users).where(filter).get()?.n ?? 0);
  return { items, total };
}

import { asc, desc, eq, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { isUniqueViolation } from '../db/pg-errors';
import { inTransaction } from '../db/pg-transaction';
import { counters, passkeys, totpCredentials, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import { toUserView, type ListOptions } from './model';
import type { UserStore } from './store';

const registeredTotp = sql<boolean>`exists(select 1 from ${totpCredentials} where ${totpCredentials}.${sql.identifier(totpCredentials.userId.name)} = ${users}.${sql.identifier(users.id.name)})`;
// Qualified by hand: Drizzle writes a single-table select's columns bare, and a bare "id" here would be the passkey's.
const passkeyCount = sql<number>`(select count(*)::int from ${passkeys} where ${passkeys}.${sql.identifier(passkeys.userId.name)} = ${users}.${sql.identifier(users.id.name)})`;
const viewColumns = {
  id: users.id,
  createdAt: users.createdAt,
  email: users.email,
  emailVerified: users.emailVerified,
  registeredTotp,
  passkeyCount,
  disabled: users.disabled,
  disabledUntil: users.disabledUntil,
};
// strpos() instead of LIKE, so `%` and `_` in the query are literal characters.
const emailContains = sql`strpos(${users.email}, ${sql.placeholder('query')}) > 0`;

function preparePage(db: PgDb, options: ListOptions, name: string) {
  const direction = options.ascending ? asc : desc;
  const order = options.sortBy === 'id' ? [direction(users.id)] : [direction(users.createdAt), direction(users.id)];
  return db
    .select(viewColumns)
    .from(users)
    .where(options.emailQuery === null ? undefined : emailContains)
    .orderBy(...order)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare(name);
}

/** The PostgreSQL twin of sqliteUserStore; the queries every request runs are prepared once. */
export function postgresUserStore(db: PgDb, append: AppendEventsPg): UserStore {
  const viewById = db.select(viewColumns).from(users).where(eq(users.id, sql.placeholder('id'))).prepare('user_view_by_id');
  const rowById = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare('user_by_id');
  const rowByEmail = db.select().from(users).where(eq(users.email, sql.placeholder('email'))).prepare('user_by_email');
  const total = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare('users_total');
  const matching = db.select({ n: sql<number>`count(*)::int` }).from(users).where(emailContains).prepare('users_matching');
  const pages = new Map<string, ReturnType<typeof preparePage>>();
  const page = (options: ListOptions) => {
    const key = `${options.sortBy}_${options.ascending ? 'asc' : 'desc'}_${options.emailQuery !== null ? 'filtered' : 'all'}`;
    let query = pages.get(key);
    if (query === undefined) pages.set(key, (query = preparePage(db, options, `users_page_${key}`)));
    return query;
  };

  return {
    async findView(id, now) {
      const [row] = await viewById.execute({ id });
      return row && toUserView(row, now);
    },
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
    async list(options, now) {
      const [rows, counted] = await Promise.all([
        page(options).execute({ query: options.emailQuery, limit: options.perPage, offset: (options.page - 1) * options.perPage }),
        options.emailQuery === null ? total.execute() : matching.execute({ query: options.emailQuery }),
      ]);
      const first = counted[0] as { value?: number; n?: number } | undefined;
      return { items: rows.map((row) => toUserView(row, now)), total: first?.value ?? first?.n ?? 0 };
    },
  };
}

// `bun run test/bench/pg-query-cost.ts`: what one primary-key SELECT costs on PostgreSQL through
// raw Bun.SQL and through Drizzle, one at a time (round trip) and 32 in flight (throughput).
// Feeds the capacity plan of issue 13; the numbers are in notes/pg-redis-findings.md.
import { SQL } from 'bun';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sql';
import * as schema from '../../src/db/pg-schema';
import { reportSkipped } from '../support/debian-packages';
import { postgresAvailability, startPostgres } from '../support/postgres';

const USERS = 1000;
const SEQUENTIAL = Number(process.env.PG_BENCH_SEQUENTIAL ?? 5000);
const PARALLEL = Number(process.env.PG_BENCH_PARALLEL ?? 20000);
const IN_FLIGHT = 32;

if (reportSkipped('pg-query-cost', await postgresAvailability())) process.exit(0);
const server = await startPostgres();
try {
  const { url } = await server.freshDatabase();
  const client = new SQL({ url, max: 10 });
  const db = drizzle({ client, schema });
  const ids = Array.from({ length: USERS }, (_, i) => `user-${String(i).padStart(6, '0')}`);
  await db.insert(schema.users).values(ids.map((id) => ({ id, createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'r' })));
  const pick = (i: number) => ids[i % USERS]!;
  const prepared = db.select().from(schema.users).where(eq(schema.users.id, sql.placeholder('id'))).prepare('user_by_id');

  const variants: Record<string, (id: string) => Promise<unknown>> = {
    'raw Bun.SQL tagged template': (id) => client`SELECT * FROM users WHERE id = ${id}`,
    'drizzle select().where(eq)': (id) => db.select().from(schema.users).where(eq(schema.users.id, id)),
    'drizzle .prepare() + execute': (id) => prepared.execute({ id }),
  };

  const rows: string[] = [];
  for (const [name, query] of Object.entries(variants)) {
    for (let i = 0; i < 500; i++) await query(pick(i)); // warm-up: JIT and the server's plan cache
    let start = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await query(pick(i));
    const roundTripUs = ((performance.now() - start) * 1000) / SEQUENTIAL;
    start = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < PARALLEL) await query(pick(next++));
      }),
    );
    const perSecond = PARALLEL / ((performance.now() - start) / 1000);
    rows.push(`| ${name} | ${roundTripUs.toFixed(0)} µs | ${Math.round(perSecond).toLocaleString('en')} /s |`);
  }
  console.log(`| query (PK lookup, ${USERS} users) | sequential round trip | ${IN_FLIGHT} in flight, pool of 10 |`);
  console.log('|---|---|---|');
  for (const row of rows) console.log(row);
  await client.close();
} finally {
  await server.close();
}

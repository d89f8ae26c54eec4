// PostgreSQL's GET /events waits only for transactions that can still write Gatehouse's events (its
// own database), holds no pooled connection while it waits, and cannot starve the pool (a server
// process with the default pool of 10 connections, 20 readers polling).
import { SQL } from 'bun';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { STRONG_PASSWORD } from './support/constants';
import { postgresForThisFile } from './support/postgres';
import { killAllServers, startServer, type ServerProcess } from './support/server-process';

const pg = await postgresForThisFile('the PostgreSQL event reader');
const READERS = 20;
let server: ServerProcess;
let databaseUrl: string;
let userId: string;

/** A session in `url` that took a transaction id and stays idle in its transaction until `end` is called. */
async function idleTransactionIn(url: string): Promise<{ end: () => Promise<void> }> {
  const client = new SQL({ url, max: 1 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const holding = new Promise<void>((resolve) => (started = resolve));
  const done = client.begin(async (tx) => {
    await tx`select pg_current_xact_id()`;
    started();
    await released;
  });
  await holding;
  return {
    end: async () => {
      release();
      await done;
      await client.close();
    },
  };
}

const readPage = async () => {
  const response = await server.request('GET', '/events?after=0');
  return { status: response.status, events: response.status === 200 ? ((await response.json()) as unknown[]).length : -1 };
};

beforeAll(async () => {
  if (pg.skip) return;
  databaseUrl = (await pg.server().freshDatabase()).url;
  server = await startServer({
    args: ['serve', '--port', '0', '--pwned-check', 'off', '--database-url', databaseUrl, '--secret', 'events-reader-secret-0123'],
    timeoutMs: 60_000,
  });
  userId = ((await (await server.request('POST', '/users', { password: STRONG_PASSWORD })).json()) as { id: string }).id;
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await killAllServers();
});

describe.skipIf(pg.skip)('GET /events on PostgreSQL', () => {
  test("an idle transaction in another database of the cluster does not hold the feed back: 20 readers, 3 pages each, every page has the event", async () => {
    const elsewhere = new URL(databaseUrl);
    elsewhere.pathname = '/postgres';
    const idle = await idleTransactionIn(elsewhere.toString());
    try {
      const pages = await Promise.all(Array.from({ length: READERS }, async () => [await readPage(), await readPage(), await readPage()]));
      expect(pages.flat().filter((page) => page.status !== 200 || page.events < 1)).toEqual([]);
    } finally {
      await idle.end();
    }
  }, 60_000);

  test("20 readers waiting for an idle transaction in Gatehouse's own database hold no connection: reads sent meanwhile answer before the readers' wait ends", async () => {
    const idle = await idleTransactionIn(databaseUrl);
    try {
      const order: string[] = [];
      const readers = Array.from({ length: READERS }, () => readPage().then((page) => order.push(`reader ${page.status} ${page.events}`)));
      // The readers are polling now (their wait lasts 1 s); twice the pool's size in reads of a user.
      await Bun.sleep(200);
      const reads = Array.from({ length: 20 }, () => server.request('GET', `/users/${userId}`).then((response) => order.push(`read ${response.status}`)));
      await Promise.all([...readers, ...reads]);
      // Every read answered 200 before any reader gave up waiting (with an empty page, as documented).
      expect(order.slice(0, 20)).toEqual(Array.from({ length: 20 }, () => 'read 200'));
      expect(order.slice(20)).toEqual(Array.from({ length: READERS }, () => 'reader 200 0'));
    } finally {
      await idle.end();
    }
  }, 60_000);
});

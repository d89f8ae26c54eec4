import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Db } from '../../src/db/client';
import type { PgDb } from '../../src/db/pg-client';
import type { BreachChecker } from '../../src/breach-check/checker';
import type { Clock } from '../../src/security/clock';
import type { PasswordHasher } from '../../src/hashing/password-hash';
import type { RateLimits } from '../../src/limits/rate-limit';
import type { RelyingParty } from '../../src/passkeys/webauthn/ceremonies';
import type { DeliveryTimings, WebhookTarget } from '../../src/webhooks/model';
import type { MigrationHookTarget } from '../../src/password-migration/model';
import { SECRET, STRONG_PASSWORD, WEAK_PASSWORD } from './constants';
import { postgresInstance, sqliteInstance, type Instance, type InstanceSettings } from './instance';
import { INSTANCES, SETUP as SETUP_OF_RUN, sharedEngines, trackTenant, type Setup } from './setups';

export { SECRET, STRONG_PASSWORD, WEAK_PASSWORD };

/** A breach checker that knows a fixed set, so tests never touch the network. */
export const fakeBreachChecker = (breached: string[] = [WEAK_PASSWORD, 'password', '12345678']): BreachChecker => ({
  isBreached: async (password) => breached.includes(password),
});

export interface CallOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
  auth?: string | null;
}

export interface HarnessOptions {
  breach?: BreachChecker;
  hashing?: { concurrency: number; maxQueue: number };
  hasher?: PasswordHasher;
  startMs?: number;
  /** Metrics are on by default, as in `gatehouse serve`. */
  metrics?: boolean;
  /** Instead of the fake clock (advance() and setNow() then do nothing). */
  clock?: Clock;
  /** Writes the webhook outbox and runs a sender to this target. */
  webhook?: WebhookTarget & { timings?: DeliveryTimings };
  /** Turns the passkey endpoints on (API.md §13). */
  relyingParty?: RelyingParty;
  /** The password migration hook (API.md §19); `timeoutMs` only where a test cannot wait the real 5 s. */
  passwordMigration?: { target: MigrationHookTarget; timeoutMs?: number };
  /**
   * Pins the harness to SQLite whatever GATEHOUSE_TEST_SETUP says, for a suite that reads SQLite
   * itself (the fuzz suite). Such a harness does not make its suite an HTTP suite of every set-up.
   */
  setup?: 'sqlite';
}

/** The database of a harness, for tests that look at stored rows (test/support/rows.ts). */
export type Backend = { kind: 'sqlite'; db: Db } | { kind: 'postgres'; db: PgDb };

let harnesses = 0;

/**
 * The rule that puts a suite on every set-up (issue 34): a test file that builds a harness following
 * GATEHOUSE_TEST_SETUP drives the service over HTTP. `bun run test` (test/run.ts) names a file in
 * GATEHOUSE_TEST_HARNESS_SUITES on its SQLite run, and every test file that builds such a harness
 * writes its path there; those files then run on PostgreSQL and on two instances.
 */
function recordHarnessSuite(): void {
  const record = process.env.GATEHOUSE_TEST_HARNESS_SUITES;
  if (!record) return;
  const file = /\(?(\/[^():]+\.test\.ts):\d+:\d+/.exec(new Error().stack ?? '')?.[1];
  if (file === undefined) throw new Error('createHarness was called outside a test file: cannot record its suite');
  appendFileSync(record, `${relative(process.cwd(), file)}\n`);
}

/**
 * An in-process Gatehouse with a fake clock and a captured log, on the storage GATEHOUSE_TEST_SETUP
 * names (test/support/setups.ts): in-memory SQLite, or a fresh PostgreSQL database with Redis limits,
 * as one instance or as two whose requests alternate. Ready at once on SQLite; on PostgreSQL every
 * call waits for `ready` first.
 */
export function createHarness(options: HarnessOptions = {}) {
  const SETUP: Setup = options.setup ?? SETUP_OF_RUN;
  if (options.setup === undefined) recordHarnessSuite();
  let now = options.startMs ?? Date.UTC(2026, 0, 1);
  const logs: Record<string, unknown>[] = [];
  const settings: InstanceSettings = {
    clock: options.clock ?? (() => now),
    log: (fields) => logs.push(fields),
    breach: options.breach ?? fakeBreachChecker(),
    hasher: options.hasher,
    hashing: options.hashing,
    metrics: options.metrics !== false,
    webhook: options.webhook,
    relyingParty: options.relyingParty ?? null,
    passwordMigration: options.passwordMigration,
  };
  const instances: Instance[] = [];
  let backend: Backend | undefined;
  let tenant: { touch(): void } | undefined;

  if (SETUP === 'sqlite') {
    const built = sqliteInstance(settings);
    instances.push(built.instance);
    backend = { kind: 'sqlite', db: built.db };
  }
  const ready: Promise<void> =
    SETUP === 'sqlite'
      ? Promise.resolve()
      : (async () => {
          const { pg, redis } = await sharedEngines();
          const database = await pg.freshDatabase();
          const engines = { databaseUrl: database.url, redisUrl: redis.url, prefix: `h${process.pid}-${++harnesses}:` };
          for (let i = 0; i < INSTANCES; i++) {
            const built = await postgresInstance(settings, engines);
            instances.push(built.instance);
            backend ??= { kind: 'postgres', db: built.db };
          }
          tenant = trackTenant(async () => {
            await Promise.all(instances.map((instance) => instance.close()));
            await pg.admin(`DROP DATABASE IF EXISTS "${database.name}" WITH (FORCE)`);
          });
        })();

  const first = (): Instance => {
    const instance = instances[0];
    if (instance === undefined) throw new Error('the harness is not ready: await h.ready (or a call) first');
    return instance;
  };
  let turn = 0;

  /** Sends the request as a client of the service would; with two instances they take turns. */
  async function handle(request: Request): Promise<Response> {
    await ready;
    tenant?.touch();
    const instance = instances[turn++ % instances.length]!;
    return instance.handle(request);
  }

  async function call(method: string, path: string, opts: CallOptions = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth !== null) headers.authorization = opts.auth ?? SECRET;
    const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const response = await handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let json: any = undefined;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, headers: response.headers, json, text };
  }

  /** The same request to every instance (metrics are per process): the answers' texts. */
  async function callEach(method: string, path: string): Promise<string[]> {
    await ready;
    return Promise.all(instances.map(async (instance) => (await instance.handle(new Request(`http://localhost${path}`, { method, headers: { authorization: SECRET } }))).text()));
  }

  async function createUser(body: Record<string, unknown> = {}) {
    const res = await call('POST', '/users', { body: { password: STRONG_PASSWORD, ...body } });
    if (res.status !== 200) throw new Error(`createUser failed: ${res.status} ${res.text}`);
    return res.json as { id: string; recovery_code: string; email: string | null; created_at: number };
  }

  const deps = {
    clock: settings.clock,
    log: settings.log,
    /** The SQLite database (SQLite set-up only). */
    get db(): Db {
      if (backend?.kind !== 'sqlite') throw new Error('h.deps.db is the SQLite database; use test/support/rows.ts to read rows on any set-up');
      return backend.db;
    },
    get limits(): RateLimits {
      return first().limits;
    },
    /** Every instance's limits delegate to these from now on. */
    set limits(fresh: RateLimits) {
      for (const instance of instances) instance.limits = fresh;
    },
  };

  return {
    setup: SETUP,
    ready,
    deps,
    get db(): Db {
      return deps.db;
    },
    get backend(): Backend {
      if (backend === undefined) throw new Error('the harness is not ready: await h.ready first');
      return backend;
    },
    get instances(): readonly Instance[] {
      return instances;
    },
    get stores() {
      return first().stores;
    },
    get services() {
      return first().services;
    },
    get app() {
      return first().app;
    },
    get sender() {
      return first().sender;
    },
    platform: { log: settings.log, clock: settings.clock },
    handle,
    call,
    callEach,
    createUser,
    logs,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    setNow: (ms: number) => {
      now = ms;
    },
  };
}
export type Harness = ReturnType<typeof createHarness>;

export const expectError = (res: { status: number; json: any }, status: number, error: string) => {
  if (res.status !== status || res.json?.error !== error) {
    throw new Error(`expected ${status} ${error}, got ${res.status} ${JSON.stringify(res.json)}`);
  }
};

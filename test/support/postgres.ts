import { SQL } from 'bun';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratePostgres } from '../../src/db/pg-client';
import { ensureDebianPackages, type Availability } from './debian-packages';
import { type EngineProcess, freePort, engineForThisFile, type RunAs, runCommand, signalTree, startEngine, stopEngine } from './engine-process';

/** Debian 12's server; on another release apt may install a newer major, which findBinDir also finds. */
const PACKAGE = { name: 'postgresql', provides: '/usr/lib/postgresql/15/bin/postgres' };
const SUPERUSER = 'postgres';

/** A throwaway PostgreSQL cluster: trust authentication, no fsync, on 127.0.0.1 and a socket in its directory. */
export interface PostgresServer {
  readonly port: number;
  /** The temporary directory: data in `data/`, the Unix socket beside it. */
  readonly dir: string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  url(database?: string): string;
  readonly running: boolean;
  /** Stops the engine and keeps its data. `fast` ends sessions as a service stop does; `immediate` as a crash does. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the stopped engine again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops every process of the cluster without closing a socket: connections hang, like a host that stopped answering. */
  freeze(): void;
  thaw(): void;
  /** Runs SQL on the `postgres` database as superuser (CREATE DATABASE and such). */
  admin(text: string): Promise<unknown[]>;
  /** An empty database (or a copy of `template`), and its URL. */
  createDatabase(options?: { name?: string; template?: string }): Promise<{ name: string; url: string }>;
  /**
   * A new database with Gatehouse's migrations applied, for one harness: a copy of a template
   * migrated once per server (about 30 ms, against about 110 ms for migrating an empty one).
   */
  freshDatabase(): Promise<{ name: string; url: string }>;
  /** Stops the engine for good and removes its directory. */
  close(): Promise<void>;
}

/** The newest installed major version's bin directory, or POSTGRES_BIN_DIR. */
function findBinDir(): string | undefined {
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) return existsSync(join(fromEnv, 'postgres')) ? fromEnv : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && Number(v) >= 15 && existsSync(join(root, v, 'bin/postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The uid/gid of a user from /etc/passwd. */
function systemUser(name: string): RunAs | undefined {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}

const isRoot = () => process.getuid?.() === 0;

/** Installs PostgreSQL when missing and possible; otherwise says why the suite cannot run. */
export async function postgresAvailability(): Promise<Availability> {
  if (findBinDir() === undefined) {
    const installed = await ensureDebianPackages([PACKAGE]);
    if (findBinDir() === undefined) return installed.ok ? { ok: false, reason: 'no PostgreSQL 15+ server binary after installing' } : installed;
  }
  if (isRoot() && systemUser(SUPERUSER) === undefined) return { ok: false, reason: 'running as root and there is no postgres system user to run PostgreSQL as' };
  return { ok: true };
}

/**
 * initdb into a new temporary directory and start the cluster. Call postgresAvailability first.
 * `sharedBuffers`: the tests' 64MB, or a bench's cache sized for its data (PostgreSQL's docs start a
 * dedicated server at a quarter of its memory).
 */
export async function startPostgres(options: { sharedBuffers?: string } = {}): Promise<PostgresServer> {
  const binDir = findBinDir();
  if (binDir === undefined) throw new Error('PostgreSQL is not installed: call postgresAvailability() first');
  const runAs = isRoot() ? systemUser(SUPERUSER) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const data = join(dir, 'data');
  let port = await freePort();
  let engine: EngineProcess | undefined;
  let adminSql: SQL | undefined;
  let databases = 0;
  let template: Promise<string> | undefined;
  const url = (database = 'postgres') => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;

  const launch = () =>
    startEngine(
      [
        join(binDir, 'postgres'), '-D', data, '-p', String(port), '-k', dir,
        '-c', 'listen_addresses=127.0.0.1',
        // Test data is thrown away, so durability settings only cost time.
        '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
        '-c', 'max_connections=300', '-c', `shared_buffers=${options.sharedBuffers ?? '64MB'}`,
      ],
      { ready: /database system is ready to accept connections/, runAs },
    );

  const closeAdmin = async () => {
    const sql = adminSql;
    adminSql = undefined;
    await sql?.close({ timeout: 0 });
  };

  try {
    await runCommand([join(binDir, 'initdb'), '-D', data, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], runAs);
    engine = await launch().catch(async (error) => {
      // Another process may have taken the port between freePort() and the bind: one more try.
      if (!/could not (bind|create listen)/i.test(String(error))) throw error;
      port = await freePort();
      return launch();
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const server: PostgresServer = {
    get port() { return port; },
    dir,
    url,
    get running() { return engine !== undefined; },
    async stop(mode = 'fast') {
      if (engine === undefined) return;
      await closeAdmin();
      const stopping = engine;
      engine = undefined;
      signalTree(stopping.pid, 'SIGCONT');
      await stopEngine(stopping, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    },
    async start() {
      if (engine === undefined) engine = await launch();
    },
    freeze() {
      if (engine) signalTree(engine.pid, 'SIGSTOP');
    },
    thaw() {
      if (engine) signalTree(engine.pid, 'SIGCONT');
    },
    async admin(text) {
      adminSql ??= new SQL({ url: url(), max: 1, connectionTimeout: 5 });
      return [...(await adminSql.unsafe(text))];
    },
    async createDatabase(options = {}) {
      const name = options.name ?? `test_${process.pid}_${++databases}`;
      const template = options.template === undefined ? '' : ` TEMPLATE "${options.template}" STRATEGY FILE_COPY`;
      await server.admin(`CREATE DATABASE "${name}"${template}`);
      return { name, url: url(name) };
    },
    async freshDatabase() {
      template ??= server.createDatabase({ name: 'gatehouse_template' }).then(async ({ name, url: templateUrl }) => {
        await migratePostgres(templateUrl);
        return name;
      });
      return server.createDatabase({ template: await template });
    },
    async close() {
      await server.stop('fast');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Call at the top of a test file: one PostgreSQL for the file's tests, or `skip` with the reason printed. */
export const postgresForThisFile = (suite: string) => engineForThisFile(suite, 'PostgreSQL', postgresAvailability, startPostgres);

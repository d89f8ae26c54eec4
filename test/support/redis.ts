import { RedisClient } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackages, type Availability } from './debian-packages';
import { type EngineProcess, freePort, engineForThisFile, startEngine, stopEngine } from './engine-process';

const PACKAGE = { name: 'redis-server', provides: '/usr/bin/redis-server' };

/** A throwaway redis-server on 127.0.0.1, without persistence. */
export interface RedisServer {
  readonly port: number;
  readonly dir: string;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly running: boolean;
  /** SIGKILL: connections drop at once and every key is gone, as after a crash without persistence. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** SIGSTOP: the socket stays open and nothing answers, like a hung host. */
  freeze(): void;
  thaw(): void;
  /** Drops every key (between tests). */
  flush(): Promise<void>;
  /** Kills it and removes its directory. */
  close(): Promise<void>;
}

export function redisAvailability(): Promise<Availability> {
  return ensureDebianPackages([PACKAGE]);
}

/** Starts redis-server on a free port. Call redisAvailability first. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-'));
  let port = await freePort();
  let engine: EngineProcess | undefined;
  const launch = () =>
    startEngine(
      [PACKAGE.provides, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--daemonize', 'no', '--loglevel', 'notice'],
      { ready: /Ready to accept connections/, cwd: dir },
    );
  try {
    engine = await launch().catch(async (error) => {
      // Another process may have taken the port between freePort() and the bind: one more try.
      if (!/Address already in use/i.test(String(error))) throw error;
      port = await freePort();
      return launch();
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const server: RedisServer = {
    get port() { return port; },
    dir,
    get url() { return `redis://127.0.0.1:${port}`; },
    get running() { return engine !== undefined; },
    async kill() {
      if (engine === undefined) return;
      const stopping = engine;
      engine = undefined;
      await stopEngine(stopping, 'SIGKILL');
    },
    async start() {
      if (engine === undefined) engine = await launch();
    },
    freeze() {
      engine?.signal('SIGSTOP');
    },
    thaw() {
      engine?.signal('SIGCONT');
    },
    async flush() {
      const client = new RedisClient(server.url, { autoReconnect: false, connectionTimeout: 2000 });
      try {
        await client.send('FLUSHALL', []);
      } finally {
        client.close();
      }
    },
    async close() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Call at the top of a test file: one redis-server for the file's tests, or `skip` with the reason printed. */
export const redisForThisFile = (suite: string) => engineForThisFile(suite, 'redis-server', redisAvailability, startRedis);

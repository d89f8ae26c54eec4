import { afterAll, beforeAll } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { reportSkipped, type Availability } from './debian-packages';

/** Who a database engine runs as: PostgreSQL refuses root, so root tests hand it to a system user. */
export interface RunAs {
  uid: number;
  gid: number;
}

/** A database engine run by a test, from start until it exits. */
export interface EngineProcess {
  readonly pid: number;
  /** Everything it wrote so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves once it has exited, with its exit code or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals>;
  signal(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();

// A test process that ends without its afterAll (a thrown error, ctrl-C) leaves no engine behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `command` and resolves once a line of its output matches `ready`. */
export async function startEngine(command: string[], options: { ready: RegExp; runAs?: RunAs; timeoutMs?: number; cwd?: string }): Promise<EngineProcess> {
  const [file, ...args] = command;
  if (file === undefined) throw new Error('empty command');
  // node:child_process, because Bun.spawn cannot switch user.
  const child = spawn(file, args, { cwd: options.cwd, uid: options.runAs?.uid, gid: options.runAs?.gid, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(signal ?? code ?? -1);
    });
    child.once('error', (error) => {
      running.delete(child);
      text += String(error);
      resolve(-1);
    });
  });
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let ended = false;
  void exited.then(() => (ended = true));
  while (!options.ready.test(text)) {
    if (ended || Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${command.join(' ')} did not start: ${text.trim().split('\n').slice(-5).join(' | ')}`);
    }
    await Bun.sleep(10);
  }
  return {
    pid: child.pid ?? -1,
    output: () => text,
    exited,
    signal: (signal) => void child.kill(signal),
  };
}

/** Runs a one-shot command (initdb and such) to its end; throws with its output when it fails. */
export async function runCommand(command: string[], runAs?: RunAs): Promise<void> {
  const engine = await startEngine(command, { ready: /^/, runAs });
  const result = await engine.exited;
  if (result !== 0) throw new Error(`${command.join(' ')} failed (${result}): ${engine.output().trim()}`);
}

/** Stops an engine with `signal` and waits for it to exit; SIGKILL if it takes longer than `graceMs`. */
export async function stopEngine(engine: EngineProcess, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  engine.signal(signal);
  const timer = setTimeout(() => engine.signal('SIGKILL'), graceMs);
  await engine.exited;
  clearTimeout(timer);
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The process and every descendant, from /proc: PostgreSQL serves each session from a child. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent; the command name in field 2 may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** SIGSTOP/SIGCONT a process tree: an engine that accepts connections but never answers, like a hung host. */
export function signalTree(pid: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
  for (const p of processTree(pid)) {
    try {
      process.kill(p, signal);
    } catch {
      // Gone already.
    }
  }
}

/**
 * Call at the top of a test file: makes sure the engine can run (installing it if needed and possible),
 * starts one before the file's tests and removes it after. `skip` is true (and the reason printed)
 * when it cannot run.
 */
export async function engineForThisFile<Server extends { close(): Promise<void> }>(
  suite: string,
  what: string,
  availability: () => Promise<Availability>,
  start: () => Promise<Server>,
): Promise<{ skip: boolean; server: () => Server }> {
  const skip = reportSkipped(suite, await availability());
  let server: Server | undefined;
  let starting: Promise<Server> | undefined;
  // Generous hook timeouts: on a loaded machine starting takes seconds, and a hook that times out
  // would leave afterAll nothing to close.
  beforeAll(async () => {
    if (skip) return;
    starting = start();
    server = await starting;
  }, 60_000);
  afterAll(async () => {
    const started = await starting?.catch(() => undefined);
    await started?.close();
  }, 30_000);
  return {
    skip,
    server: () => {
      if (server === undefined) throw new Error(`${what} is not running`);
      return server;
    },
  };
}

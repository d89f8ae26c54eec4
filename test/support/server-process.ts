import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { afterAll } from 'bun:test';

export const REPO_ROOT = resolve(import.meta.dir, '../..');
/** `bun run src/main.ts`: under `bun test`, process.execPath is the bun binary running the tests. */
export const SOURCE_COMMAND = [process.execPath, 'run', join(REPO_ROOT, 'src/main.ts')];

export function makeTempDir(prefix = 'gatehouse-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Call once at the top of a test file: returns a maker of temporary directories that, with any
 * server the file left running, are cleaned up after the file's tests.
 */
export function tempDirsOfThisFile(): () => string {
  const dirs: string[] = [];
  afterAll(async () => {
    await killAllServers();
    for (const dir of dirs) removeDir(dir);
  });
  return () => {
    const dir = makeTempDir();
    dirs.push(dir);
    return dir;
  };
}

/** The parent's environment without GATEHOUSE_* variables, so a developer's own settings never leak in. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('GATEHOUSE_')) env[name] = value;
  }
  return { ...env, ...extra };
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs a command that is expected to exit by itself; kills it after `timeoutMs` so a test cannot hang. */
export async function runToExit(args: string[], options: { command?: string[]; env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {}): Promise<RunResult> {
  const proc = Bun.spawn([...(options.command ?? SOURCE_COMMAND), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv(options.env),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 15_000);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}

export interface ServerProcess {
  url: string;
  port: number;
  /** The credential in use: from --secret, GATEHOUSE_SECRET, or the file the server says it wrote ('' with a keys file). */
  secret: string;
  dir: string;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Every stdout line so far, parsed as JSON where possible; keeps growing while the process runs. */
  lines: Record<string, unknown>[];
  stderr: () => string;
  /** Sends the signal and resolves to the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
  /** Authenticated fetch against the server. */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

export interface StartOptions {
  /** The program to run; defaults to `bun run src/main.ts`. */
  command?: string[];
  /** Everything after the command; defaults to `serve --port 0 --dir <dir> --pwned-check offline`. */
  args?: string[];
  /** Appended to the default args. */
  extraArgs?: string[];
  env?: Record<string, string>;
  /** Data directory; a fresh temporary one when omitted. */
  dir?: string;
  timeoutMs?: number;
  /** Working directory of the process; the repository by default. */
  cwd?: string;
}

const running = new Set<Subprocess>();

/** Starts the server and waits for its `listening on` log line. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const dir = options.dir ?? makeTempDir();
  const args = options.args ?? ['serve', '--port', '0', '--dir', dir, '--pwned-check', 'offline', ...(options.extraArgs ?? [])];
  const proc = Bun.spawn([...(options.command ?? SOURCE_COMMAND), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv(options.env),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  running.add(proc);
  proc.exited.then(() => running.delete(proc));

  const lines: Record<string, unknown>[] = [];
  let stderrText = '';
  void collectLines(proc.stdout, (line) => lines.push(parseLine(line)));
  void collectLines(proc.stderr, (line) => (stderrText += `${line}\n`));

  const listening = await waitFor(() => lines.find((line) => /^listening on /.test(String(line.message ?? ''))), proc, options.timeoutMs ?? 20_000, () => stderrText);
  const port = Number(listening.port);
  const url = String(listening.message).replace(/^listening on /, '');
  const secret = resolveSecret(args, options.env ?? {}, lines);

  return {
    url,
    port,
    secret,
    dir,
    proc,
    lines,
    stderr: () => stderrText,
    async stop(signal = 'SIGTERM') {
      proc.kill(signal);
      return proc.exited;
    },
    request(method, path, body, headers = {}) {
      return fetch(`${url}${path}`, {
        method,
        headers: { authorization: secret, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    },
  };
}

/** For afterAll: kills whatever a failed test left running. */
export async function killAllServers(): Promise<void> {
  const procs = [...running];
  for (const proc of procs) proc.kill('SIGKILL');
  await Promise.all(procs.map((proc) => proc.exited));
}

function flagValue(args: string[], name: string): string | undefined {
  const index = args.findLastIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index < 0) return undefined;
  const flag = args[index]!;
  return flag === name ? args[index + 1] : flag.slice(name.length + 1);
}

/** As the server chooses (API.md §8): a flag beats a variable, and a value or a file beats the generated secret. */
function resolveSecret(args: string[], env: Record<string, string>, lines: Record<string, unknown>[]): string {
  const readFile = (path: string) => readFileSync(path, 'utf8').trim();
  // Service keys (API.md §17): the file holds no key; the test sends its own Authorization header.
  if (flagValue(args, '--keys-file') !== undefined || env.GATEHOUSE_KEYS_FILE) return '';
  const fromFlag = flagValue(args, '--secret');
  if (fromFlag !== undefined) return fromFlag;
  const fileFlag = flagValue(args, '--secret-file');
  if (fileFlag !== undefined) return readFile(fileFlag);
  if (env.GATEHOUSE_SECRET) return env.GATEHOUSE_SECRET;
  if (env.GATEHOUSE_SECRET_FILE) return readFile(env.GATEHOUSE_SECRET_FILE);
  const announced = lines.map((line) => /secret in (.+)$/.exec(String(line.message ?? ''))).find((match) => match !== null);
  if (!announced) throw new Error('the server did not say where its secret is');
  return readFileSync(announced[1]!, 'utf8').trim();
}

function parseLine(line: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? parsed : { raw: line };
  } catch {
    return { raw: line };
  }
}

async function collectLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  }
  if (buffered !== '') onLine(buffered);
}

async function waitFor<T>(find: () => T | undefined, proc: Subprocess, timeoutMs: number, stderr: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (proc.exitCode !== null || proc.signalCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server did not start (exit ${proc.exitCode}): ${stderr()}`);
    }
    await Bun.sleep(20);
  }
}

import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { databasePath, openDatabase, type Db } from '../db/client';
import { systemClock } from '../security/clock';
import { openPostgresForTools } from '../db/pg-client';
import { createTransferService, type TransferService, type TransferStore } from '../transfer/service';
import { sqliteTransferStore } from '../transfer/store';
import { postgresTransferStore } from '../transfer/store.pg';
import { UsageError } from './config';
import { readPrivateFile } from './secret-rules';
import { parseUrl } from './values';
import { checkedLinesOf } from './line-checker';
import { fileSink, stdoutSink } from './ndjson';
import { importProgress, progressBar } from './progress';

type Env = Record<string, string | undefined>;
export type TransferCommand = 'import' | 'export' | 'backup';

const say = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (startedMs: number) => `${((performance.now() - startedMs) / 1000).toFixed(1)} s`;
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** API.md §8: `--dir D | --database-url URL`; a flag beats its variable. */
function parse(command: TransferCommand, args: string[], env: Env) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { dir: { type: 'string' }, 'database-url': { type: 'string' }, 'database-url-file': { type: 'string' }, ...(command === 'import' ? { 'on-conflict': { type: 'string' } } : {}) },
    });
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message.split('. ')[0]}`);
  }
  const { dir, 'database-url': url, 'database-url-file': urlFile } = parsed.values as Record<string, string | undefined>;
  if (dir !== undefined && (url !== undefined || urlFile !== undefined)) throw new UsageError(`${command}: give --dir or --database-url, not both`);
  const databaseUrl = dir === undefined ? databaseUrlOf(url, urlFile, env) : undefined;
  if (databaseUrl !== undefined && command === 'backup') {
    throw new UsageError('backup copies the SQLite database only; back up PostgreSQL with its own tools (pg_dump)');
  }
  const dataDir = dir ?? (env.GATEHOUSE_DATA_DIR || './gatehouse_data');
  if (dataDir.trim() === '') throw new UsageError('--dir must not be empty');
  return {
    dir: dataDir,
    databaseUrl: databaseUrl === undefined ? null : parseUrl('database-url', databaseUrl, ['postgres', 'postgresql'], true),
    positionals: parsed.positionals,
    onConflict: (parsed.values as Record<string, string | undefined>)['on-conflict'],
  };
}

/** `--database-url`, or `--database-url-file` read under the secret file's rules; a flag beats either variable. */
function databaseUrlOf(url: string | undefined, file: string | undefined, env: Env): string | undefined {
  if (url !== undefined && file !== undefined) throw new UsageError('give --database-url or --database-url-file, not both');
  if (url !== undefined) return url;
  if (file !== undefined) return readPrivateFile(file);
  const [fromEnv, fileFromEnv] = [env.GATEHOUSE_DATABASE_URL || undefined, env.GATEHOUSE_DATABASE_URL_FILE || undefined];
  if (fromEnv !== undefined && fileFromEnv !== undefined) throw new UsageError('GATEHOUSE_DATABASE_URL and GATEHOUSE_DATABASE_URL_FILE are both set; set one');
  return fileFromEnv === undefined ? fromEnv : readPrivateFile(fileFromEnv);
}

/** The store of `--dir`'s SQLite database or of `--database-url`'s PostgreSQL, and how to let it go. */
interface OpenStore {
  store: TransferStore;
  close(): Promise<void>;
}

async function openStore(command: TransferCommand, where: { dir: string; databaseUrl: string | null }, existing: boolean): Promise<OpenStore> {
  if (where.databaseUrl !== null) {
    const client = await openPostgresForTools(where.databaseUrl, command);
    return { store: postgresTransferStore(client), close: () => client.close() };
  }
  const db = existing ? openExisting(where.dir) : openDatabase(where.dir);
  return { store: sqliteTransferStore(db), close: async () => db.$client.close() };
}

/** Export and backup read an existing database; they never create an empty one. */
function openExisting(dir: string): Db {
  if (!existsSync(databasePath(dir))) throw new UsageError(`no database at ${databasePath(dir)} (see --dir)`);
  return openDatabase(dir);
}

/** Writing over the live database (or its WAL) would destroy it. */
function outputPath(file: string, dir: string): string {
  const path = resolve(file);
  const database = resolve(databasePath(dir));
  if ([database, `${database}-wal`, `${database}-shm`].includes(path)) throw new UsageError(`${file} is the database itself`);
  return path;
}

function services(store: TransferStore): TransferService {
  return createTransferService({ store, clock: systemClock });
}

async function runImport(args: string[], env: Env): Promise<number> {
  const started = performance.now();
  const { positionals, onConflict = 'fail', ...where } = parse('import', args, env);
  if (positionals.length !== 1) throw new UsageError('import: give one FILE, or - for standard input');
  if (onConflict !== 'fail' && onConflict !== 'skip') throw new UsageError(`invalid --on-conflict '${onConflict}': expected fail or skip`);
  const file = positionals[0]!;
  let size: number | null = null;
  if (file !== '-') {
    if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`import: ${file} is not a readable file`);
    size = statSync(file).size;
  }
  let bytesRead = 0;
  const checkedLines = (now: number) => checkedLinesOf(file, now, (bytes) => (bytesRead = bytes));
  const opened = await openStore('import', where, false);
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.on('SIGINT', interrupt).on('SIGTERM', interrupt);
  try {
    const outcome = await services(opened.store).importUsers(checkedLines, {
      onConflict,
      signal: stop.signal,
      progress: importProgress(() => bytesRead, size),
      report: say,
      readTwice: file !== '-',
    });
    const lines = outcome.firstProblemLines.join(', ') + (outcome.problemLines > outcome.firstProblemLines.length ? ', ...' : '');
    const skipped = outcome.problemLines > 0 ? `, skipped ${outcome.problemLines} (line${outcome.problemLines === 1 ? '' : 's'} ${lines})` : '';
    if (outcome.result === 'refused') {
      say(`imported nothing: ${count(outcome.problemLines, 'line')} with problems (${lines}); fix them or use --on-conflict skip (${seconds(started)})`);
      return 1;
    }
    if (outcome.result === 'interrupted') {
      say(`interrupted: imported ${outcome.imported === 0 ? 'nothing' : count(outcome.imported, 'user')} (${seconds(started)})`);
      return 130;
    }
    say(`imported ${count(outcome.imported, 'user')}${skipped} in ${seconds(started)}`);
    return 0;
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
    await opened.close();
  }
}

async function runExport(args: string[], env: Env): Promise<number> {
  const started = performance.now();
  const { positionals, ...where } = parse('export', args, env);
  if (positionals.length > 1) throw new UsageError('export: give at most one FILE (- or none for standard output)');
  const file = positionals[0] ?? '-';
  const target = file === '-' ? null : outputPath(file, where.dir);
  const opened = await openStore('export', where, true);
  const sink = target === null ? stdoutSink() : fileSink(target);
  const interrupt = () => {
    sink.abandon();
    process.exit(130);
  };
  process.on('SIGINT', interrupt).on('SIGTERM', interrupt);
  const bar = progressBar('exporting', 'users');
  try {
    const exported = await services(opened.store).exportUsers(
      (text) => sink.write(text),
      (done, total) => bar.update(done, done, total),
    );
    await sink.finish();
    bar.stop();
    say(`exported ${count(exported, 'user')} to ${target ?? 'standard output'} in ${seconds(started)}`);
    return 0;
  } catch (error) {
    bar.stop();
    sink.abandon();
    throw error;
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
    await opened.close();
  }
}

/** VACUUM INTO a new 0600 file beside the target, synced, then renamed over it: never a half backup. */
async function runBackup(args: string[], env: Env): Promise<number> {
  const started = performance.now();
  const { dir, positionals } = parse('backup', args, env);
  if (positionals.length !== 1 || positionals[0] === '-') throw new UsageError('backup: give one FILE to write');
  const target = outputPath(positionals[0]!, dir);
  const db = openExisting(dir);
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  const cleanUp = () => rmSync(partial, { force: true });
  const interrupt = () => {
    cleanUp();
    process.exit(130);
  };
  process.on('SIGINT', interrupt).on('SIGTERM', interrupt);
  try {
    closeSync(openSync(partial, 'wx', 0o600));
    await services(sqliteTransferStore(db)).backup(partial);
    chmodSync(partial, 0o600);
    const fd = openSync(partial, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(partial, target);
    say(`backed up ${databasePath(dir)} to ${target} (${(statSync(target).size / 1e6).toFixed(1)} MB) in ${seconds(started)}`);
    return 0;
  } catch (error) {
    cleanUp();
    throw error;
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
    db.$client.close();
  }
}

const RUN = { import: runImport, export: runExport, backup: runBackup };

/** Resolves to the exit code: 2 for a bad flag or value (one line on stderr), 1 when the work failed. */
export async function runTransferCommand(command: TransferCommand, args: string[], env: Env): Promise<number> {
  try {
    return await RUN[command](args, env);
  } catch (error) {
    if (error instanceof UsageError) {
      say(`gatehouse: ${error.message}`);
      return 2;
    }
    say(`gatehouse: ${command} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    return 1;
  }
}

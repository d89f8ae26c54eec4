import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { digestOf, generateKey, KEY_NAME, keyLine, KeysFileError, makeKey, parseKeysFile, type ServiceKey } from '../keys/model';
import { assertPrivateFile, exists } from './secret-rules';
import { UsageError } from './values';

type Env = Record<string, string | undefined>;
const WHAT = 'keys file';

function parsedText(path: string, text: string): ServiceKey[] {
  try {
    return parseKeysFile(text);
  } catch (error) {
    if (error instanceof KeysFileError) throw new UsageError(`${WHAT} ${path} ${error.message}`);
    throw error;
  }
}

function readKeysText(path: string): string {
  if (!exists(path)) throw new UsageError(`${WHAT} ${path} does not exist`);
  assertPrivateFile(path, WHAT);
  return readFileSync(path, 'utf8');
}

/**
 * The keys of a --keys-file, under the secret file's rules (API.md §9, §17). A file that does not
 * parse or holds no key is refused: at start-up that stops the server, on a reload it changes nothing.
 */
export function loadKeysFile(path: string): ServiceKey[] {
  const keys = parsedText(path, readKeysText(path));
  if (keys.length === 0) throw new UsageError(`${WHAT} ${path} holds no key ('gatehouse keys add' makes one)`);
  return keys;
}

/** Replaces the file in one rename, so a server reloading it reads the old file or the new one, never half of one. */
function writeKeysFile(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  rmSync(temp, { force: true });
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

const fieldsOf = (line: string) => line.replace(/#.*/, '').trim().split(/\s+/);

function parseKeysArgs(args: string[], env: Env) {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { scope: { type: 'string' }, 'keys-file': { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`keys: ${(error as Error).message.split('. ')[0]} (see 'gatehouse keys --help')`);
  }
  const path = parsed.values['keys-file'] ?? (env.GATEHOUSE_KEYS_FILE || undefined);
  if (path === undefined || path.trim() === '') throw new UsageError('keys: give --keys-file F or set GATEHOUSE_KEYS_FILE');
  return { path, scope: parsed.values.scope, positionals: parsed.positionals };
}

/** `gatehouse keys add|list|remove` (API.md §17): what it prints on stdout is the key (add) or the list. */
export function runKeysCommand(args: string[], env: Env): void {
  const { path, scope, positionals } = parseKeysArgs(args, env);
  const [action, name, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`keys: unexpected argument '${extra[0]}'`);
  if (action === 'list') {
    if (name !== undefined) throw new UsageError(`keys list: unexpected argument '${name}'`);
    if (scope !== undefined) throw new UsageError('keys list takes no --scope');
    const keys = parsedText(path, readKeysText(path));
    const width = (column: (key: ServiceKey) => string) => Math.max(0, ...keys.map((key) => column(key).length));
    const [names, scopes] = [width((key) => key.name), width((key) => key.scope)];
    for (const key of keys) process.stdout.write(`${key.name.padEnd(names)}  ${key.scope.padEnd(scopes)}  sha256:${key.digest.slice(0, 8)}\n`);
    return;
  }
  if (action !== 'add' && action !== 'remove') throw new UsageError(`keys: expected add, list or remove, got ${action === undefined ? 'nothing' : `'${action}'`}`);
  if (name === undefined) throw new UsageError(`keys ${action}: missing NAME`);
  if (!KEY_NAME.test(name)) throw new UsageError(`keys ${action}: invalid name '${name}': 1 to 64 of a-z, 0-9, _ and -`);
  if (action === 'add') return addKey(path, name, scope);
  if (scope !== undefined) throw new UsageError('keys remove takes no --scope');
  removeKey(path, name);
}

function addKey(path: string, name: string, scope: string | undefined): void {
  if (scope === undefined) throw new UsageError('keys add: missing --scope (*, read, or operationIds joined by commas)');
  const text = exists(path) ? readKeysText(path) : '';
  if (parsedText(path, text).some((key) => key.name === name)) throw new UsageError(`keys add: ${path} already has a key named '${name}'`);
  const secret = generateKey();
  const key = makeKey(name, scope, digestOf(secret));
  if (typeof key === 'string') throw new UsageError(`keys add: ${key}`);
  writeKeysFile(path, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${keyLine(key)}\n`);
  // The key on stdout alone, for a script to capture; it is not stored anywhere and not shown again.
  process.stdout.write(`${secret}\n`);
  process.stderr.write(`added key '${name}' (scope ${scope}) to ${path}; the key above is shown only now\n`);
}

function removeKey(path: string, name: string): void {
  const lines = readKeysText(path).split('\n');
  parsedText(path, lines.join('\n'));
  const kept = lines.filter((line) => fieldsOf(line)[0] !== name);
  if (kept.length === lines.length) throw new UsageError(`keys remove: ${path} has no key named '${name}'`);
  writeKeysFile(path, kept.join('\n'));
  process.stderr.write(`removed key '${name}' from ${path}\n`);
}

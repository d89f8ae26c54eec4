import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { generateTotpCode, parseTotpKey, timeStep } from '../src/security/totp';
import { GENERATED_HASH, generatedLine, writeGeneratedUsers } from './support/generated-users';
import { ensureDebianPackages, reportSkipped } from './support/debian-packages';
import { cleanEnv, REPO_ROOT, runToExit, SOURCE_COMMAND, startServer, tempDirsOfThisFile } from './support/server-process';
import { PASSWORD, VECTORS } from './password-formats.vectors';

const tempDir = tempDirsOfThisFile();
const KEY = 'DZTYTmomMEvwwP6GsZJHZJkUCHI=';
const RECOVERY_CODE = 'K7QM2ZXDH3PA9WEN';

/** `bun run src/main.ts …` with standard input from a string. */
async function gatehouse(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([...SOURCE_COMMAND, ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(options.env),
    stdin: options.stdin === undefined ? 'ignore' : new Blob([options.stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

const users = (dir: string) => new Database(join(dir, 'gatehouse.db'), { readonly: true }).query('SELECT id, email FROM users ORDER BY id').all();
const ndjson = (...lines: unknown[]) => `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`;

describe('export → import into an empty directory → export', () => {
  test('gives the same bytes, and the users work in the new directory: passwords, TOTP, recovery codes', async () => {
    const first = tempDir();
    const server = await startServer({ dir: first });
    const made = (await (await server.request('POST', '/users', { email: 'api@example.com', password: 'a strong api password' })).json()) as { id: string };
    const key = parseTotpKey(KEY)!;
    const registered = await server.request('POST', `/users/${made.id}/register-totp`, { key: KEY, code: generateTotpCode(key, Date.now()) });
    expect(registered.status).toBe(200);
    await server.request('POST', '/users', { password_hash: VECTORS[0]!.hash });
    await server.stop();

    // Richer lines than the API makes: foreign ids and hashes, verified emails, a known recovery code, TOTP state.
    const recoveryHash = createHash('sha256').update(RECOVERY_CODE).digest('hex');
    const lines = [
      ...VECTORS.map((v, i) => ({ id: `legacy-${i}`, created_at: 1_600_000_000 + (i % 7), email: i % 3 === 0 ? null : `Legacy${i}@Example.com`, email_verified: i % 2 === 0, password_hash: v.hash })),
      { id: 'auth0|5f7c8ec7c33c6c004bbafe82', email: 'totp@example.com', password_hash: GENERATED_HASH, recovery_code_hash: recoveryHash, totp_key: KEY, totp_last_step: 7 },
      ...Array.from({ length: 3000 }, (_, i) => generatedLine(i + 1, { totpEvery: 5 })),
    ];
    writeFileSync(join(first, 'more.ndjson'), ndjson(...lines));
    const imported = await gatehouse(['import', join(first, 'more.ndjson'), '--dir', first]);
    expect(imported.stderr).toMatch(new RegExp(`^imported ${lines.length} users in [0-9.]+ s\n$`));

    const exported = await gatehouse(['export', join(first, 'one.ndjson'), '--dir', first]);
    expect(exported).toMatchObject({ exitCode: 0, stdout: '' });
    expect(exported.stderr).toMatch(new RegExp(`^exported ${lines.length + 2} users to .*one\\.ndjson in [0-9.]+ s\n$`));
    const second = tempDir();
    expect((await gatehouse(['import', join(first, 'one.ndjson'), '--dir', second])).exitCode).toBe(0);
    expect((await gatehouse(['export', join(first, 'two.ndjson'), '--dir', second])).exitCode).toBe(0);
    const one = readFileSync(join(first, 'one.ndjson'));
    expect(readFileSync(join(first, 'two.ndjson')).equals(one)).toBe(true);
    expect(one.toString().split('\n').length).toBe(lines.length + 3); // two API users and the final newline

    const moved = await startServer({ dir: second });
    const call = async (path: string, body: unknown) => (await moved.request('POST', path, body)).status;
    expect(await call(`/users/${made.id}/verify-password`, { password: 'a strong api password' })).toBe(204);
    expect(await call('/authenticate/password', { email: 'legacy1@example.com', password: PASSWORD })).toBe(200);
    expect(await call(`/users/${made.id}/verify-2fa/totp`, { code: generateTotpCode(key, Date.now() + 30_000) })).toBe(204);
    const auth0 = encodeURIComponent('auth0|5f7c8ec7c33c6c004bbafe82');
    // The imported step 7 is long past: today's code is accepted once, then refused.
    const now = generateTotpCode(key, Date.now());
    expect(await call(`/users/${auth0}/verify-2fa/totp`, { code: now })).toBe(204);
    expect(await call(`/users/${auth0}/verify-2fa/totp`, { code: now })).toBe(400);
    expect(timeStep(Date.now())).toBeGreaterThan(7);
    expect(await call(`/users/${auth0}/reset-2fa`, { recovery_code: RECOVERY_CODE.toLowerCase() })).toBe(200);
    await moved.stop();
  }, 60_000);

  test('export writes mode 0600 even under umask 000, and - or no file means standard output', async () => {
    const dir = tempDir();
    expect((await gatehouse(['import', '-', '--dir', dir], { stdin: ndjson(generatedLine(1), generatedLine(2)) })).exitCode).toBe(0);
    const file = join(dir, 'users.ndjson');
    const shell = `umask 000 && exec ${[...SOURCE_COMMAND, 'export', file, '--dir', dir].map((a) => `'${a}'`).join(' ')}`;
    const proc = Bun.spawn(['sh', '-c', shell], { cwd: REPO_ROOT, env: cleanEnv(), stdout: 'pipe', stderr: 'pipe' });
    expect(await proc.exited).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const toStdout = await gatehouse(['export', '-', '--dir', dir]);
    expect(toStdout.stdout).toBe(readFileSync(file, 'utf8'));
    expect((await gatehouse(['export', '--dir', dir], { env: { GATEHOUSE_DATA_DIR: '/nonexistent' } })).stdout).toBe(toStdout.stdout);
    expect((await gatehouse(['export'], { env: { GATEHOUSE_DATA_DIR: dir } })).stdout).toBe(toStdout.stdout);
    expect(readdirSync(dir).filter((name) => name.includes('partial'))).toEqual([]);
  });
});

describe('import checks every line before writing any', () => {
  const lines = ndjson(
    { id: 'a-1', email: 'first@example.com', password_hash: GENERATED_HASH },
    { email: 'FIRST@example.com', password_hash: GENERATED_HASH },
    { id: 'a-1', email: 'third@example.com', password_hash: GENERATED_HASH },
    { email: 'taken@example.com', password_hash: GENERATED_HASH },
    '',
    { email: 'fine@example.com', password_hash: GENERATED_HASH },
    '{"email": "broken@example.com", "password_hash": 12}',
  );

  test('fail (the default): nothing is imported, each problem is named by line and field, exit 1', async () => {
    const dir = tempDir();
    await gatehouse(['import', '-', '--dir', dir], { stdin: ndjson({ email: 'Taken@example.com', password_hash: GENERATED_HASH }) });
    const result = await gatehouse(['import', '-', '--dir', dir], { stdin: lines });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.split('\n').slice(0, -2)).toEqual([
      'line 2: email: already on line 1',
      'line 3: id: already on line 1',
      'line 4: email: EMAIL_ALREADY_USED, held by an existing user',
      'line 7: password_hash: must be a string',
    ]);
    expect(result.stderr).toMatch(/\nimported nothing: 4 lines with problems \(2, 3, 4, 7\); fix them or use --on-conflict skip \([0-9.]+ s\)\n$/);
    expect(users(dir)).toHaveLength(1);
  });

  test('skip: the good lines are imported and the skipped ones listed', async () => {
    const dir = tempDir();
    await gatehouse(['import', '-', '--dir', dir], { stdin: ndjson({ email: 'taken@example.com', password_hash: GENERATED_HASH }) });
    const result = await gatehouse(['import', '-', '--dir', dir, '--on-conflict', 'skip'], { stdin: lines });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/\nimported 2 users, skipped 4 \(lines 2, 3, 4, 7\) in [0-9.]+ s\n$/);
    expect(users(dir).map((u: any) => u.email).sort()).toEqual(['fine@example.com', 'first@example.com', 'taken@example.com']);
  });

  test('an argon2 hash that costs more than about a second to check is refused (UNSUPPORTED_PASSWORD_HASH)', async () => {
    const dir = tempDir();
    const slow = '$argon2id$v=19$m=16,t=49152,p=2$8l6rdW7Nudf63/ufc865tw$EpSF/WQ3FbCGCTs+mFAdmg'; // 9 s a check
    const result = await gatehouse(['import', '-', '--dir', dir], { stdin: ndjson({ email: 'slow@example.com', password_hash: slow }) });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe('line 1: password_hash: UNSUPPORTED_PASSWORD_HASH, in no accepted format');
  });

  test('lines that are not UTF-8 or too long are named; CRLF line ends are fine', async () => {
    const dir = tempDir();
    const file = join(dir, 'odd.ndjson');
    const good = (n: number) => Buffer.from(`${generatedLine(n)}\r\n`);
    writeFileSync(file, Buffer.concat([good(1), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(`{"x":"${'y'.repeat(70_000)}"}\n`), good(4)]));
    const result = await gatehouse(['import', file, '--dir', dir, '--on-conflict', 'skip']);
    expect(result.stderr.split('\n').slice(0, 2)).toEqual(['line 2: not valid UTF-8', 'line 3: longer than 65536 bytes']);
    expect(result.stderr).toContain('imported 2 users, skipped 2 (lines 2, 3)');
  });
});

describe('bad arguments: exit 2 and one line', () => {
  const dir = tempDir();
  test.each([
    ['import without a file', ['import', '--dir', dir], 'import: give one FILE, or - for standard input'],
    ['import of a missing file', ['import', '/nonexistent.ndjson', '--dir', dir], 'import: /nonexistent.ndjson is not a readable file'],
    ['a bad --on-conflict', ['import', '-', '--dir', dir, '--on-conflict', 'merge'], "invalid --on-conflict 'merge': expected fail or skip"],
    ['an unknown flag', ['export', '--dir', dir, '--verbose'], "export: Unknown option '--verbose'"],
    ['export of a directory without a database', ['export', '--dir', join(dir, 'none')], `no database at ${join(dir, 'none', 'gatehouse.db')} (see --dir)`],
    ['export over the database', ['export', join(dir, 'gatehouse.db'), '--dir', dir], `${join(dir, 'gatehouse.db')} is the database itself`],
    ['a database URL that is not PostgreSQL', ['import', '-', '--database-url', 'mysql://db/gatehouse'], 'invalid --database-url: expected a postgres or postgresql URL'],
    ['--dir and --database-url', ['export', '--dir', dir, '--database-url', 'postgres://db/x'], 'export: give --dir or --database-url, not both'],
    ['backup with a database URL', ['backup', '/tmp/x.db', '--database-url', 'postgres://db/x'], 'backup copies the SQLite database only; back up PostgreSQL with its own tools (pg_dump)'],
    ['backup to standard output', ['backup', '-', '--dir', dir], 'backup: give one FILE to write'],
  ])('%s', async (_name, args, message) => {
    if (!existsSync(join(dir, 'gatehouse.db'))) await gatehouse(['import', '-', '--dir', dir], { stdin: '' });
    expect(await runToExit(args)).toEqual({ exitCode: 2, stdout: '', stderr: `gatehouse: ${message}\n` });
  });

  test('GATEHOUSE_DATABASE_URL counts like the flag; --dir beats it', async () => {
    const env = { GATEHOUSE_DATABASE_URL: 'postgres://db/gatehouse' };
    expect((await runToExit(['backup', join(dir, 'b.db')], { env })).exitCode).toBe(2);
    const withDir = await runToExit(['backup', join(dir, 'b.db'), '--dir', dir], { env });
    expect(withDir.exitCode).toBe(0);
  });
});

// util-linux's `script` runs a command on a pseudo-terminal and copies what it draws.
const noTerminal = reportSkipped('progress bars on a terminal', await ensureDebianPackages([{ name: 'bsdutils', provides: '/usr/bin/script' }]));

describe.skipIf(noTerminal)('on a terminal', () => {
  const onTerminal = async (args: string[]) => {
    const command = [...SOURCE_COMMAND, ...args].map((arg) => `'${arg}'`).join(' ');
    const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], { cwd: REPO_ROOT, env: cleanEnv(), stdout: 'pipe', stderr: 'pipe' });
    const [screen] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    // Without cursor movements: the redraws run together, then the summary on its own line.
    return screen.replace(/\x1b\[[0-9;?]*[a-zA-Z]|\x1b[78]/g, '').replaceAll('\r', '');
  };

  test('import and export draw a bar with the count, the rate and the time left, then the summary', async () => {
    const [dir, holdingOne] = [tempDir(), tempDir()];
    const file = join(dir, 'users.ndjson');
    await writeGeneratedUsers(file, { count: 30_000 });
    // Into an empty database the lines are written as they are read: one bar.
    const loaded = await onTerminal(['import', file, '--dir', dir]);
    expect(loaded).toMatch(/importing [█░]{40} 0% \| 0 lines \| 0 lines\/s \| 0s left/);
    expect(loaded).toMatch(/importing █{40} 100% \| 30,000 lines \| [0-9,]+ lines\/s \| 0s left\n/);
    expect(loaded).not.toContain('checking');
    expect(loaded).toMatch(/\nimported 30000 users in [0-9.]+ s\n$/);
    // Beside a user, they are checked first, then written.
    const one = join(holdingOne, 'one.ndjson');
    await Bun.write(one, `{"id":"first","email":"first@example.org","password_hash":"${GENERATED_HASH}"}\n`);
    expect(await onTerminal(['import', one, '--dir', holdingOne])).toMatch(/\nimported 1 user in [0-9.]+ s\n$/);
    const imported = await onTerminal(['import', file, '--dir', holdingOne]);
    expect(imported).toMatch(/checking [█░]{40} 0% \| 0 lines \| 0 lines\/s \| 0s left/);
    expect(imported).toMatch(/checking █{40} 100% \| 30,000 lines \| [0-9,]+ lines\/s \| 0s left/);
    expect(imported).toMatch(/importing █{40} 100% \| 30,000 users \| [0-9,]+ users\/s \| 0s left\n/);
    expect(imported).toMatch(/\nimported 30000 users in [0-9.]+ s\n$/);
    const exported = await onTerminal(['export', join(dir, 'out.ndjson'), '--dir', dir]);
    expect(exported).toMatch(/exporting █{40} 100% \| 30,000 users \| [0-9,]+ users\/s \| 0s left\n/);
    expect(exported).toMatch(/\nexported 30000 users to .*out\.ndjson in [0-9.]+ s\n$/);
  });
});

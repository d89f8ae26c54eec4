import { describe, expect, test } from 'bun:test';
import { describeProblem, isProblem, parseImportLine } from '../src/transfer/model';
import { checkLines } from '../src/cli/line-checker';
import type { InputLine } from '../src/transfer/service';
import { createHarness, type Harness } from './support/harness';
import { migrationHookOfThisFile } from './support/migration-hook';
import { VECTORS } from './password-formats.vectors';
import { transferOf, exportText } from './support/transfer';

// API.md §19 through gatehouse import and export (the transfer service on the set-up's database):
// `"password_hash": null, "migrate_password": true` goes in, comes out the same way until the
// password is taken over, and then as the argon2id hash.
const BCRYPT = VECTORS.find((v) => v.scheme === 'bcrypt')!.hash;
const PASSWORD = 'what the managed service knew';
const hook = migrationHookOfThisFile({ 'moving@example.com': PASSWORD });
const defaults = { now: 1_800_000_000, newId: () => 'generatedid', newRecoveryCodeHash: () => 'generated-recovery-hash' };
const problemOf = (value: unknown): string => {
  const parsed = parseImportLine(JSON.stringify(value), 3, defaults);
  if (!isProblem(parsed)) throw new Error(`accepted: ${JSON.stringify(value)}`);
  return describeProblem(parsed);
};

async function importText(h: Harness, text: string) {
  const lines: InputLine[] = text.split('\n').map((line, i) => ({ number: i + 1, text: line }));
  const reported: string[] = [];
  const input = (async function* () {
    yield lines;
  })();
  const progress = { reading() {}, loading() {}, writing() {}, end() {} };
  const outcome = await transferOf(h).importUsers((now) => checkLines(input, now), { onConflict: 'fail', signal: new AbortController().signal, progress, report: (line) => reported.push(line) });
  return { ...outcome, reported };
}

describe('import lines without a hash', () => {
  test('"password_hash": null (or left out) with "migrate_password": true is accepted', () => {
    for (const line of [{ password_hash: null, migrate_password: true }, { migrate_password: true, email: 'a@example.com' }]) {
      expect(isProblem(parseImportLine(JSON.stringify(line), 1, defaults))).toBe(false);
    }
  });

  test.each([
    [{ password_hash: null }, 'line 3: password_hash: required (or null with "migrate_password": true)'],
    [{ password_hash: null, migrate_password: false }, 'line 3: password_hash: required (or null with "migrate_password": true)'],
    [{ password_hash: BCRYPT, migrate_password: true }, 'line 3: password_hash: must be null with "migrate_password": true'],
    [{ password_hash: null, migrate_password: 'yes' }, 'line 3: migrate_password: must be true or false'],
    [{ password_hash: '!awaiting-password-migration' }, 'line 3: password_hash: UNSUPPORTED_PASSWORD_HASH, in no accepted format'],
  ])('%j: %s', (line, problem) => {
    expect(problemOf(line)).toBe(problem);
  });
});

describe('export → import → export', () => {
  test('an awaiting user goes out as it came in, byte for byte; once migrated, with its argon2id hash', async () => {
    const started = await hook();
    const h = createHarness({ startMs: Date.now(), passwordMigration: { target: started.target } });
    await h.ready;
    const lines = [
      '{"id":"legacy-1","email":"moving@example.com","email_verified":true,"password_hash":null,"migrate_password":true}',
      `{"id":"legacy-2","email":"staying@example.com","password_hash":${JSON.stringify(BCRYPT)}}`,
    ];
    expect((await importText(h, lines.join('\n'))).result).toBe('imported');
    const first = await exportText(h);
    const [awaiting, hashed] = first.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(awaiting).toMatchObject({ id: 'legacy-1', password_hash: null, migrate_password: true });
    expect(first).toContain('"password_hash":null,"migrate_password":true,"recovery_code_hash"');
    expect(hashed).toMatchObject({ id: 'legacy-2', password_hash: BCRYPT });
    expect(Object.keys(hashed)).not.toContain('migrate_password');

    const again = createHarness({ startMs: Date.now(), passwordMigration: { target: started.target } });
    await again.ready;
    expect((await importText(again, first)).result).toBe('imported');
    expect(await exportText(again)).toBe(first);

    // GET /users/{id} says nothing of the password either way.
    const view = (await again.call('GET', '/users/legacy-1')).json;
    expect(Object.keys(view).filter((key) => key.includes('password'))).toEqual([]);

    expect((await again.call('POST', '/authenticate/password', { body: { email: 'moving@example.com', password: PASSWORD } })).status).toBe(200);
    const migrated = JSON.parse((await exportText(again)).split('\n')[0]!);
    expect(migrated.password_hash).toStartWith('$argon2id$');
    expect(Object.keys(migrated)).not.toContain('migrate_password');
  });
});

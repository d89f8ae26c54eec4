import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { GENERATED_HASH, writeGeneratedUsers } from './support/generated-users';
import { runToExit, tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
/** The 1,000,000-line run (with ranges past 50,000 lines) is `bun run bench`'s; this is its correctness at a size that runs fast. */
const USERS = 20_000;
const BAD_LINE = 14_000;

function counts(dir: string) {
  const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
  const one = (sql: string) => Object.values(db.query(sql).get() as Record<string, number>)[0];
  const result = {
    users: one('SELECT count(*) FROM users'),
    counter: one("SELECT value FROM counters WHERE name = 'users'"),
    totp: one('SELECT count(*) FROM totp_credentials'),
    badEmail: one(`SELECT count(*) FROM users WHERE email = 'user${BAD_LINE}@example.com'`),
    // Short transactions sort their events, long ones read them from the staged id index: one each either way.
    importedEvents: one("SELECT count(*) FROM events WHERE type = 'user.imported'"),
    usersWithEvent: one("SELECT count(DISTINCT e.user_id) FROM events e JOIN users u ON u.id = e.user_id WHERE e.type = 'user.imported'"),
  };
  db.close();
  return result;
}

test(
  `${USERS.toLocaleString('en')} generated users with a bad line ${BAD_LINE.toLocaleString('en')}: fail imports nothing, skip imports every other line; both name the line`,
  async () => {
    const dir = tempDir();
    const file = join(dir, 'users.ndjson');
    const bad = JSON.stringify({ email: `user${BAD_LINE}@example`, password_hash: GENERATED_HASH });
    await writeGeneratedUsers(file, { count: USERS, replace: new Map([[BAD_LINE, bad]]), totpEvery: 10 });

    const refused = await runToExit(['import', file, '--dir', join(dir, 'fail')], { timeoutMs: 60_000 });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.split('\n')[0]).toBe(`line ${BAD_LINE}: email: INVALID_DATA, not a valid email address`);
    expect(refused.stderr).toContain(`imported nothing: 1 line with problems (${BAD_LINE})`);
    expect(counts(join(dir, 'fail'))).toEqual({ users: 0, counter: 0, totp: 0, badEmail: 0, importedEvents: 0, usersWithEvent: 0 });

    const skipped = await runToExit(['import', file, '--dir', join(dir, 'skip'), '--on-conflict', 'skip'], { timeoutMs: 60_000 });
    expect(skipped.exitCode).toBe(0);
    expect(skipped.stderr).toStartWith(`line ${BAD_LINE}: email: INVALID_DATA, not a valid email address\nimported ${USERS - 1} users, skipped 1 (line ${BAD_LINE}) in `);
    // Every 10th user has a TOTP key, the bad line among them.
    expect(counts(join(dir, 'skip'))).toEqual({ users: USERS - 1, counter: USERS - 1, totp: USERS / 10 - 1, badEmail: 0, importedEvents: USERS - 1, usersWithEvent: USERS - 1 });
  },
  120_000,
);

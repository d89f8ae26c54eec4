import type { ReservedSQL, SQL } from 'bun';
import { chunkedWrites, insertJsonRows, toNumber } from '../db/pg-bulk';
import { toTransferApiKeys } from '../api-keys/model';
import { type LineProblem, toProblem, toTransferPasskeys, type TransferUser, type UniqueField } from './model';
import type { CommitOptions, CommitResult, ImportStaging, TransferStore } from './service';
import { COUNT_PROBLEM_LINES, COUNT_WRITABLE, STAGING_CHECKS, TAKEN_FIELD, WRITABLE } from '../db/staging-checks';

// Ids compare byte by byte ("C"), as SQLite compares them, so both databases export in the same order;
// the (created_at, id) index still gives created_at, and only ties are sorted.
const EXPORT = `SELECT u.id, u.created_at AS "createdAt", u.email, u.email_verified AS "emailVerified", u.password_hash AS "passwordHash",
    u.recovery_code_hash AS "recoveryCodeHash", u.disabled, u.disabled_until AS "disabledUntil", t.key AS "totpKey", t.last_used_step AS "totpLastStep",
    (SELECT json_agg(json_build_object('id', p.id, 'credentialId', p.credential_id, 'publicKey', p.public_key, 'counter', p.counter,
       'transports', p.transports, 'backedUp', p.backed_up, 'name', p.name, 'createdAt', p.created_at, 'lastUsedAt', p.last_used_at)
       ORDER BY p.created_at, p.id COLLATE "C") FROM passkeys p WHERE p.user_id = u.id)::text AS passkeys,
    (SELECT json_agg(json_build_object('id', a.id, 'name', a.name, 'scopes', a.scopes, 'secretHash', a.secret_hash, 'start', a.start, 'createdAt', a.created_at,
       'expiresAt', a.expires_at, 'lastUsedAt', a.last_used_at) ORDER BY a.created_at, a.id COLLATE "C") FROM api_keys a WHERE a.user_id = u.id)::text AS "apiKeys"
  FROM users u LEFT JOIN totp_credentials t ON t.user_id = u.id ORDER BY u.created_at, u.id COLLATE "C"`;

type ExportRow = Omit<TransferUser, 'createdAt' | 'disabledUntil' | 'totpLastStep' | 'passkeys' | 'apiKeys'> & {
  createdAt: string; disabledUntil: string | null;
  totpLastStep: string | null;
  passkeys: string | null; apiKeys: string | null;
};
const toTransferUser = (row: ExportRow): TransferUser => ({
  ...row,
  createdAt: Number(row.createdAt),
  disabledUntil: row.disabledUntil === null ? null : Number(row.disabledUntil),
  totpLastStep: row.totpLastStep === null ? null : Number(row.totpLastStep),
  passkeys: toTransferPasskeys(row.passkeys),
  apiKeys: toTransferApiKeys(row.apiKeys),
});

/**
 * The PostgreSQL twin of sqliteTransferStore, on one connection of its own (openPostgresForTools):
 * export reads one REPEATABLE READ snapshot through a cursor; import stages the lines in temporary
 * tables, checks them with the same SQL, and writes them in short transactions while servers serve.
 */
export function postgresTransferStore(client: SQL): TransferStore {
  return {
    async exportUsers(batchSize) {
      const connection = await client.reserve();
      let total: number;
      try {
        await connection.unsafe('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        // The snapshot starts with this first query, so the count and the rows agree.
        total = toNumber((await connection.unsafe("SELECT value FROM counters WHERE name = 'users'"))[0]?.value);
        await connection.unsafe(`DECLARE export_users NO SCROLL CURSOR FOR ${EXPORT}`);
      } catch (error) {
        connection.release();
        throw error;
      }
      async function* batches(): AsyncGenerator<TransferUser[]> {
        try {
          for (let rows = await connection.unsafe(`FETCH ${batchSize} FROM export_users`); rows.length > 0; rows = await connection.unsafe(`FETCH ${batchSize} FROM export_users`)) {
            yield (rows as ExportRow[]).map(toTransferUser);
          }
        } finally {
          await connection.unsafe('COMMIT').catch(() => undefined);
          connection.release();
        }
      }
      return { total, batches: batches() };
    },

    startImport: async () => stagingOn(await client.reserve()),
    startDirectLoad: async () => null, // not built for PostgreSQL: every import there is staged

    async backup() {
      throw new Error('back up PostgreSQL with its own tools (pg_dump)');
    },
  };
}

const USER_COLUMNS = 'line, id, created_at, email, email_verified, password_hash, recovery_code_hash, totp_key, totp_last_step, disabled, disabled_until';
const PASSKEY_COLUMNS = 'line, position, id, credential_id, public_key, counter, transports, backed_up, name, created_at, last_used_at';

/** Temporary tables live in this session only: PostgreSQL drops them when the connection closes, also after a crash. */
async function stagingOn(connection: ReservedSQL): Promise<ImportStaging> {
  try {
    await connection.unsafe(`CREATE TEMP TABLE staged_users (line integer PRIMARY KEY, id text NOT NULL, created_at bigint NOT NULL, email text,
        email_verified boolean NOT NULL, password_hash text NOT NULL, recovery_code_hash text NOT NULL, totp_key text, totp_last_step bigint,
        disabled boolean NOT NULL, disabled_until bigint, written boolean NOT NULL DEFAULT false);
      CREATE TEMP TABLE staged_passkeys (line integer NOT NULL, position integer NOT NULL, id text NOT NULL, credential_id text NOT NULL,
        public_key text NOT NULL, counter bigint NOT NULL, transports text NOT NULL, backed_up boolean NOT NULL, name text NOT NULL,
        created_at bigint NOT NULL, last_used_at bigint, PRIMARY KEY (line, position));
      CREATE TEMP TABLE staged_api_keys (line integer NOT NULL, position integer NOT NULL, id text NOT NULL, name text NOT NULL, scopes text NOT NULL, secret_hash text NOT NULL, start text NOT NULL, created_at bigint NOT NULL, expires_at bigint, last_used_at bigint, PRIMARY KEY (line, position));
      CREATE TEMP TABLE staged_problems (seq bigserial PRIMARY KEY, line integer NOT NULL, field text, kind text NOT NULL, detail text, first_line integer);
      CREATE INDEX ON staged_problems (line, seq);
      CREATE TEMP TABLE undone_users (id text NOT NULL) ON COMMIT DELETE ROWS`);
  } catch (error) {
    connection.release();
    throw error;
  }
  const addProblems = (problems: LineProblem[]) =>
    insertJsonRows(connection, 'staged_problems', 'line, field, kind, detail, first_line',
      problems.map((p) => ({ line: p.line, field: p.field, kind: p.kind, detail: p.kind === 'invalid' ? p.detail : null, first_line: p.kind === 'repeats' ? p.firstLine : null })));
  const one = async (query: string) => toNumber((await connection.unsafe(query))[0]?.n);

  return {
    async add(users, problems) {
      await connection.unsafe('BEGIN');
      await insertJsonRows(connection, 'staged_users', USER_COLUMNS,
        users.map((u) => ({ line: u.line, id: u.id, created_at: u.createdAt, email: u.email, email_verified: u.emailVerified, password_hash: u.passwordHash,
          recovery_code_hash: u.recoveryCodeHash, totp_key: u.totpKey, totp_last_step: u.totpLastStep, disabled: u.disabled, disabled_until: u.disabledUntil })));
      await insertJsonRows(connection, 'staged_passkeys', PASSKEY_COLUMNS,
        users.flatMap((u) => u.passkeys.map((p, position) => ({ line: u.line, position, id: p.id, credential_id: p.credentialId, public_key: p.publicKey,
          counter: p.counter, transports: p.transports.join(','), backed_up: p.backedUp, name: p.name, created_at: p.createdAt, last_used_at: p.lastUsedAt }))));
      await insertJsonRows(connection, 'staged_api_keys', 'line, position, id, name, scopes, secret_hash, start, created_at, expires_at, last_used_at', users.flatMap((u) =>
        u.apiKeys.map((k, position) => ({ line: u.line, position, ...k, scopes: k.scopes.join(' '), secret_hash: k.secretHash, created_at: k.createdAt, expires_at: k.expiresAt, last_used_at: k.lastUsedAt }))));
      await addProblems(problems);
      await connection.unsafe('COMMIT');
    },
    async findConflicts() {
      await connection.unsafe(`CREATE INDEX ON staged_users (id); CREATE INDEX ON staged_users (email);
        CREATE INDEX ON staged_passkeys (id); CREATE INDEX ON staged_passkeys (credential_id);
        CREATE INDEX ON staged_api_keys (id); ANALYZE staged_users, staged_passkeys, staged_api_keys`);
      await connection.unsafe('BEGIN');
      for (const check of STAGING_CHECKS) await connection.unsafe(check);
      await connection.unsafe('COMMIT; ANALYZE staged_problems');
    },
    async *problems(batchSize) {
      for (let after = { line: 0, seq: '0' }; ; ) {
        const rows = await connection.unsafe(
          `SELECT seq, line, kind, field, detail, first_line AS "firstLine" FROM staged_problems WHERE (line, seq) > ($1, $2) ORDER BY line, seq LIMIT ${batchSize}`,
          [after.line, after.seq],
        );
        if (rows.length === 0) return;
        after = rows[rows.length - 1];
        yield rows.map(({ seq: _, ...row }: { seq: string }) => toProblem(row as Parameters<typeof toProblem>[0]));
      }
    },
    counts: async () => ({ problemLines: await one(COUNT_PROBLEM_LINES), writable: await one(COUNT_WRITABLE) }),
    async commit(options) {
      const result = await writeChunks(connection, options);
      await addProblems(result.conflicts);
      return result;
    },
    async close() {
      await connection.unsafe('DROP TABLE staged_users, staged_passkeys, staged_api_keys, staged_problems, undone_users').catch(() => undefined);
      connection.release();
    },
  };
}

/** How long one chunk's transaction may take; its counter update and events come last and take a fraction of it. */
const CHUNK_MS = 300;
const IN_RANGE = `s.line > $1 AND s.line <= $2`;

/**
 * Each chunk: its users, TOTP credentials and passkeys, then the user count and one `user.imported`
 * event per user, then COMMIT. The triggers leave the count to this transaction (migration 0004), so
 * the counters row is locked only for the chunk's last statements, not while its users are written.
 * The events need no lock: the chunk has its transaction id from its first insert, before it draws
 * event ids, which is all the events reader needs (events/store.pg.ts).
 */
async function writeChunks(connection: ReservedSQL, options: CommitOptions): Promise<CommitResult> {
  const run = (query: string, from: number, to: number, ...more: unknown[]) => connection.unsafe(query, [from, to, ...more]);
  const conflicts: LineProblem[] = [];
  let written = 0;
  const fieldsOf = async (lines: number[]) => {
    for (const line of lines) conflicts.push({ line, kind: 'taken', field: (await connection.unsafe(TAKEN_FIELD, [line]))[0].field as UniqueField });
  };
  const last = toNumber((await connection.unsafe('SELECT max(line) AS n FROM staged_users'))[0]?.n);
  const outcome = await chunkedWrites(last, CHUNK_MS, options.signal, async (from, to) => {
    await connection.unsafe(`BEGIN; SELECT set_config('gatehouse.user_count', 'by_caller', true)`);
    try {
      await run(`WITH inserted AS (INSERT INTO users (id, created_at, email, email_verified, password_hash, recovery_code_hash, disabled, disabled_until)
          SELECT id, created_at, email, email_verified, password_hash, recovery_code_hash, disabled, disabled_until FROM staged_users s WHERE ${IN_RANGE} AND ${WRITABLE}
          ORDER BY s.line ON CONFLICT DO NOTHING RETURNING id)
        UPDATE staged_users s SET written = true FROM inserted WHERE s.id = inserted.id AND ${IN_RANGE} AND ${WRITABLE}`, from, to);
      // A server took an id, email or credential id after the checks: those lines are not written.
      const missed = (await run(`SELECT line FROM staged_users s WHERE ${IN_RANGE} AND ${WRITABLE} AND NOT s.written ORDER BY line`, from, to)).map((r: { line: number }) => r.line);
      await run(`INSERT INTO totp_credentials (user_id, created_at, key, last_used_step)
        SELECT id, $3, totp_key, totp_last_step FROM staged_users s WHERE ${IN_RANGE} AND s.written AND totp_key IS NOT NULL`, from, to, options.now);
      await run(`INSERT INTO passkeys (user_id, id, credential_id, public_key, counter, transports, backed_up, name, created_at, last_used_at)
        SELECT s.id, k.id, k.credential_id, k.public_key, k.counter, k.transports, k.backed_up, k.name, k.created_at, k.last_used_at
        FROM staged_passkeys k JOIN staged_users s ON s.line = k.line WHERE ${IN_RANGE} AND s.written ORDER BY k.line, k.position ON CONFLICT DO NOTHING`, from, to);
      await run(`INSERT INTO api_keys (user_id, id, name, scopes, secret_hash, start, created_at, expires_at, last_used_at) SELECT s.id, k.id, k.name, k.scopes,
        k.secret_hash, k.start, k.created_at, k.expires_at, k.last_used_at FROM staged_api_keys k JOIN staged_users s ON s.line = k.line WHERE ${IN_RANGE} AND s.written ORDER BY k.line, k.position ON CONFLICT DO NOTHING`, from, to);
      const passkeyMissed = (await run(`SELECT DISTINCT s.line FROM staged_users s WHERE ${IN_RANGE} AND s.written AND (
          EXISTS (SELECT 1 FROM staged_passkeys k WHERE k.line = s.line AND NOT EXISTS (SELECT 1 FROM passkeys m WHERE m.id = k.id AND m.user_id = s.id))
          OR EXISTS (SELECT 1 FROM staged_api_keys k WHERE k.line = s.line AND NOT EXISTS (SELECT 1 FROM api_keys m WHERE m.id = k.id AND m.user_id = s.id)))
        ORDER BY s.line`, from, to)).map((r: { line: number }) => r.line);
      if ((missed.length > 0 || passkeyMissed.length > 0) && options.mode === 'fail') {
        await connection.unsafe('ROLLBACK');
        await fieldsOf([...missed, ...passkeyMissed].sort((a, b) => a - b));
        return false;
      }
      if (passkeyMissed.length > 0) {
        await connection.unsafe(`DELETE FROM users WHERE id IN (SELECT id FROM staged_users WHERE line = ANY($1::int[]))`, [`{${passkeyMissed.join(',')}}`]);
        await connection.unsafe(`UPDATE staged_users SET written = false WHERE line = ANY($1::int[])`, [`{${passkeyMissed.join(',')}}`]);
      }
      await fieldsOf([...missed, ...passkeyMissed].sort((a, b) => a - b));
      const n = toNumber((await run(`SELECT count(*) AS n FROM staged_users s WHERE ${IN_RANGE} AND s.written`, from, to))[0].n);
      if (n > 0) {
        await connection.unsafe(`UPDATE counters SET value = value + $1 WHERE name = 'users'`, [n]);
        await run(`INSERT INTO events (time, type, user_id) SELECT $3, 'user.imported', id FROM staged_users s WHERE ${IN_RANGE} AND s.written ORDER BY s.line`, from, to, options.now);
      }
      await connection.unsafe('COMMIT');
      written += n;
      options.onProgress(written);
    } catch (error) {
      await connection.unsafe('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
  const interrupted = outcome.stopped && conflicts.length === 0;
  if (!outcome.stopped || options.mode === 'skip') return { written, conflicts, interrupted };
  // All or nothing: take back what the earlier transactions wrote, each user with a `user.deleted` event.
  await chunkedWrites(outcome.reached, CHUNK_MS, null, async (from, to) => {
    await connection.unsafe(`BEGIN; SELECT set_config('gatehouse.user_count', 'by_caller', true)`);
    await run(`WITH deleted AS (DELETE FROM users WHERE id IN (SELECT id FROM staged_users s WHERE ${IN_RANGE} AND s.written) RETURNING id)
      INSERT INTO undone_users SELECT id FROM deleted`, from, to);
    await connection.unsafe(`UPDATE counters SET value = value - (SELECT count(*) FROM undone_users) WHERE name = 'users'`);
    await connection.unsafe(`INSERT INTO events (time, type, user_id) SELECT $1, 'user.deleted', id FROM undone_users`, [options.now]);
    await connection.unsafe('COMMIT');
  });
  return { written: 0, conflicts, interrupted };
}

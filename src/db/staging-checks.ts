/**
 * The checks of an import's staged lines (src/transfer), the same SQL on both databases:
 * staged_users, staged_passkeys, staged_api_keys and staged_problems are the import's private tables
 * (an attached temporary database on SQLite, temporary tables on PostgreSQL).
 */
export const WRITABLE = 'NOT EXISTS (SELECT 1 FROM staged_problems p WHERE p.line = s.line)';
const passkeyField = (column: string) => `'passkeys[' || s.position || '].${column}'`;
const apiKeyField = "'api_keys[' || s.position || '].id'";
/** The first line with a value keeps it; every later line repeating it is a problem. */
const repeats = (table: string, column: string, field: string) =>
  `INSERT INTO staged_problems (line, field, kind, first_line) SELECT s.line, ${field}, 'repeats', f.first FROM ${table} s
   JOIN (SELECT ${column}, min(line) AS first FROM ${table} WHERE ${column} IS NOT NULL GROUP BY ${column} HAVING count(*) > 1) f
     ON f.${column} = s.${column} WHERE s.line > f.first`;
const taken = (table: string, column: string, field: string, held: string) =>
  `INSERT INTO staged_problems (line, field, kind) SELECT s.line, ${field}, 'taken' FROM ${table} s
   WHERE s.${column} IS NOT NULL AND EXISTS (SELECT 1 FROM ${held} m WHERE m.${column} = s.${column})`;
export const STAGING_CHECKS = [
  repeats('staged_users', 'id', "'id'"),
  repeats('staged_users', 'email', "'email'"),
  repeats('staged_passkeys', 'id', passkeyField('id')),
  repeats('staged_passkeys', 'credential_id', passkeyField('credential_id')),
  repeats('staged_api_keys', 'id', apiKeyField),
  taken('staged_users', 'id', "'id'", 'users'),
  taken('staged_users', 'email', "'email'", 'users'),
  taken('staged_passkeys', 'id', passkeyField('id'), 'passkeys'),
  taken('staged_passkeys', 'credential_id', passkeyField('credential_id'), 'passkeys'),
  taken('staged_api_keys', 'id', apiKeyField, 'api_keys'),
];
export const COUNT_PROBLEM_LINES = 'SELECT count(DISTINCT line) AS n FROM staged_problems';
export const COUNT_WRITABLE = `SELECT count(*) AS n FROM staged_users s WHERE ${WRITABLE}`;
/** Which value of staged line $1 the database holds now (a server wrote it after the checks). */
export const TAKEN_FIELD = `SELECT CASE WHEN EXISTS (SELECT 1 FROM users m WHERE m.id = u.id) THEN 'id'
  WHEN EXISTS (SELECT 1 FROM users m WHERE m.email = u.email) THEN 'email'
  ELSE coalesce((SELECT 'passkeys[' || s.position || CASE WHEN EXISTS (SELECT 1 FROM passkeys k WHERE k.credential_id = s.credential_id) THEN '].credential_id' ELSE '].id' END
        FROM staged_passkeys s WHERE s.line = u.line AND EXISTS (SELECT 1 FROM passkeys k WHERE k.credential_id = s.credential_id OR k.id = s.id)
        ORDER BY s.position LIMIT 1),
      (SELECT 'api_keys[' || s.position || '].id' FROM staged_api_keys s WHERE s.line = u.line AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.id)
        ORDER BY s.position LIMIT 1)) END AS field FROM staged_users u WHERE u.line = $1`;

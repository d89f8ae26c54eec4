import { SQLiteError } from 'bun:sqlite';

/** The SQLite error behind a failed statement: Drizzle wraps it in its own error as `cause`. */
function sqliteErrorOf(error: unknown): SQLiteError | undefined {
  if (error instanceof SQLiteError) return error;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof SQLiteError ? cause : undefined;
}

export const isUniqueViolation = (error: unknown): boolean => sqliteErrorOf(error)?.code === 'SQLITE_CONSTRAINT_UNIQUE';

/** A row that references a user deleted since the service loaded it. */
export const isForeignKeyViolation = (error: unknown): boolean => sqliteErrorOf(error)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

/** Runs a write of a row that references a user: false when the user was deleted meanwhile. */
export function writtenUnlessUserGone(write: () => unknown): boolean {
  try {
    write();
    return true;
  } catch (error) {
    if (isForeignKeyViolation(error)) return false;
    throw error;
  }
}

/** Another row holds the key: a unique index or the primary key (SQLite names the two differently). */
export const isKeyConflict = (error: unknown): boolean => {
  const code = sqliteErrorOf(error)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
};

/** Another connection holds the lock a statement needs (with a busy timeout of 0, at once). */
export const isBusy = (error: unknown): boolean => sqliteErrorOf(error)?.code?.startsWith('SQLITE_BUSY') === true;

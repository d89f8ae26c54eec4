/** bun:sqlite reports a constraint failure only in the message text. */
export const isUniqueViolation = (error: unknown): boolean =>
  error instanceof Error && /UNIQUE constraint failed/.test(error.message);

/** A row that references a user deleted since the route loaded it. */
export const isForeignKeyViolation = (error: unknown): boolean =>
  error instanceof Error && /FOREIGN KEY constraint failed/.test(error.message);

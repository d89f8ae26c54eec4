/** Bulk reads and writes on a PostgreSQL database that running servers share (gatehouse import, export). */
import type { ReservedSQL } from 'bun';
import { nextChunkSize } from './bulk';

/** Rows as JSON objects whose keys are the table's column names: one statement for a whole batch. */
export async function insertJsonRows(connection: ReservedSQL, table: string, columns: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return;
  await connection.unsafe(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $1::text::json)`, [
    JSON.stringify(rows),
  ]);
}

/** int8 and numeric come back from Bun.SQL as strings. */
export const toNumber = (value: unknown): number => Number(value ?? 0);

export type ChunkWrite = (from: number, to: number) => Promise<boolean | void>;

/**
 * Runs `write` over the ranges (from, to] covering (0, upTo], one transaction each, sized so a
 * transaction takes about `targetMs`. Unlike SQLite, PostgreSQL lets servers write meanwhile; what
 * they may wait for is a row or advisory lock the chunk takes at its end, so a chunk stays short.
 * `write` returning false stops (it rolled its range back); so does an aborted `signal`, between ranges.
 */
export async function chunkedWrites(upTo: number, targetMs: number, signal: AbortSignal | null, write: ChunkWrite) {
  let size = 1_000;
  for (let from = 0; from < upTo; ) {
    if (signal?.aborted) return { reached: from, stopped: true };
    const to = Math.min(upTo, from + size);
    const started = performance.now();
    if ((await write(from, to)) === false) return { reached: from, stopped: true };
    from = to;
    size = nextChunkSize(size, targetMs, performance.now() - started, 50_000);
  }
  return { reached: upTo, stopped: false };
}

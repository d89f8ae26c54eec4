import { systemClock } from '../../src/security/clock';
import { createTransferService } from '../../src/transfer/service';
import { sqliteTransferStore } from '../../src/transfer/store';
import { postgresTransferStore } from '../../src/transfer/store.pg';
import type { Harness } from './harness';

/** The import/export service on the harness's own database, SQLite or PostgreSQL. */
export function transferOf(h: Harness) {
  const backend = h.backend;
  const store = backend.kind === 'sqlite' ? sqliteTransferStore(backend.db) : postgresTransferStore(backend.db.$client);
  return createTransferService({ store, clock: systemClock });
}

/** What `gatehouse export` would write for the harness's users. */
export async function exportText(h: Harness): Promise<string> {
  let text = '';
  await transferOf(h).exportUsers(async (chunk) => void (text += chunk), () => {});
  return text;
}

import { systemClock } from '../../src/security/clock';
import { createTransferService } from '../../src/transfer/service';
import { sqliteTransferStore } from '../../src/transfer/store';
import { postgresTransferStore } from '../../src/transfer/store.pg';
import type { StagedUser } from '../../src/transfer/model';
import { GENERATED_HASH } from './generated-users';
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

/** Staged line `line` as the checks would leave it: user-{line}, user{line}@example.com, a bcrypt hash; `fields` replace any of it. */
export const stagedUser = (line: number, fields: Partial<StagedUser> = {}): StagedUser => ({
  line,
  id: `user-${line}`,
  createdAt: 1_700_000_000 + line,
  email: `user${line}@example.com`,
  emailVerified: false,
  disabled: false,
  disabledUntil: null,
  passwordHash: GENERATED_HASH,
  recoveryCodeHash: GENERATED_HASH,
  totpKey: null,
  totpLastStep: null,
  passkeys: [],
  apiKeys: [],
  ...fields,
});

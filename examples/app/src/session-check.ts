import type { GatehouseClient } from './gatehouse';
import type { Session } from './session';

/**
 * A signed-in session ends when its user is disabled or deleted, or when a credential changes
 * anywhere (a reset or a new password, the address confirmed or changed, credentials revoked): the
 * app reads the user from Gatehouse and the user's events since the session last looked, at most
 * once a minute. The events' ids are the credential version: the session remembers the newest it saw.
 */
export const RECHECK_MS = 60_000;
const ENDS_SESSIONS = new Set(['password.reset', 'password.updated', 'email.verified', 'email.updated', 'credentials.revoked', 'user.disabled', 'user.deleted']);
const PAGE = 1000;
const MAX_PAGES = 20;

/** Reads the user's events after `after`: the newest id, and whether one of them ends sessions. */
export async function readEvents(gatehouse: GatehouseClient, userId: string, after = 0): Promise<{ cursor: number; ends: boolean }> {
  let cursor = after;
  let ends = false;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, error } = await gatehouse.listEvents({ user_id: userId, after: cursor, limit: PAGE });
    if (error) throw new Error(`listEvents answered ${error.status} ${error.code}`);
    for (const event of data) {
      cursor = event.id;
      if (ENDS_SESSIONS.has(event.type)) ends = true;
    }
    if (data.length < PAGE) break;
  }
  return { cursor, ends };
}

/**
 * The state a new signed-in session starts from: nothing that happened before it ends it. A session
 * begun while the address was unconfirmed may be someone's who signed up with another person's
 * address (pre-account hijacking): it ends when the address is confirmed, unless it confirmed it.
 */
export async function signedInState(gatehouse: GatehouseClient, userId: string): Promise<Partial<Session>> {
  const user = await gatehouse.getUser({ id: userId });
  const { cursor } = await readEvents(gatehouse, userId);
  return { userId, eventCursor: cursor, checkedAt: Date.now(), unconfirmed: user.data?.email_verified !== true || undefined };
}

/** False when the session must end; otherwise moves its cursor on. */
export async function stillSignedIn(gatehouse: GatehouseClient, session: Session, recheckMs = RECHECK_MS): Promise<boolean> {
  if (!session.userId) return false;
  if (session.checkedAt !== undefined && Date.now() - session.checkedAt < recheckMs) return true;
  const user = await gatehouse.getUser({ id: session.userId });
  if (user.error?.code === 'NOT_FOUND') return false;
  if (user.error) throw new Error(`getUser answered ${user.error.status} ${user.error.code}`);
  if (user.data.disabled || (session.unconfirmed && user.data.email_verified)) return false;
  const { cursor, ends } = await readEvents(gatehouse, session.userId, session.eventCursor);
  if (ends) return false;
  session.eventCursor = cursor;
  session.checkedAt = Date.now();
  return true;
}

/** After a change this session made itself (its own address confirmation): it stays, others end. */
export async function acceptOwnChange(gatehouse: GatehouseClient, session: Session): Promise<void> {
  if (!session.userId) return;
  session.eventCursor = (await readEvents(gatehouse, session.userId, session.eventCursor)).cursor;
  session.unconfirmed = undefined;
}

import { timingSafeEqual } from 'node:crypto';

/**
 * The app's own sessions (Gatehouse keeps none): an opaque random id in an HttpOnly, SameSite=Lax
 * cookie, the state in memory. A real deployment keeps them in its database or Redis; the shape
 * stays the same.
 *
 * A visitor gets a stored session only when a flow has something to keep (a sign-in, a pending code,
 * a notice): until then the session is a draft that nothing stores, and its CSRF token lives in a
 * cookie of its own (double submit), so a flood of requests without cookies costs no memory.
 */
export interface Session {
  /** '' for a draft: not stored, no `sid` cookie. */
  id: string;
  csrf: string;
  expiresAt: number;
  /** Set once the person is signed in. */
  userId?: string;
  /** The id of the newest of the user's Gatehouse events seen, and when they were last read. */
  eventCursor?: number;
  checkedAt?: number;
  /** Signed in while the user's address was not confirmed (session-check.ts). */
  unconfirmed?: true;
  /** Password or emailed code accepted, TOTP still to come. */
  pendingUserId?: string;
  emailSignInRequestId?: string;
  resetRequestId?: string;
  resetUserId?: string;
  /** A TOTP key shown as a QR code and not yet confirmed with a code (standard base64). */
  pendingTotpKey?: string;
  passkeyChallengeId?: string;
  /** One message for the next page shown. */
  notice?: string;
}

const COOKIE = 'sid';
const CSRF_COOKIE = 'csrf';
const SIGNED_IN_LIFETIME_MS = 8 * 60 * 60 * 1000;
/** Long enough for a flow whose emailed code lives 10 minutes. */
const ANONYMOUS_LIFETIME_MS = 15 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 10_000;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const STATE: (keyof Session)[] = ['userId', 'pendingUserId', 'emailSignInRequestId', 'resetRequestId', 'pendingTotpKey', 'passkeyChallengeId', 'notice'];

export const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url');
const signedIn = (session: Session) => Boolean(session.userId || session.pendingUserId);

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  /** `maxSessions` bounds the memory; when full, the oldest anonymous session makes room. */
  constructor(
    private readonly secureCookies: boolean,
    private readonly maxSessions = DEFAULT_MAX_SESSIONS,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /**
   * The request's stored session, or a draft whose CSRF token comes from the `csrf` cookie (a new
   * token when there is none: `csrfCookie` is then to be sent). Nothing is stored here.
   */
  load(cookieHeader: string | null): { session: Session; csrfCookie?: string } {
    const id = readCookie(cookieHeader, COOKIE);
    const found = id ? this.sessions.get(id) : undefined;
    if (found && found.expiresAt > Date.now()) return { session: found };
    if (found) this.sessions.delete(found.id);
    const token = readCookie(cookieHeader, CSRF_COOKIE);
    if (token && TOKEN.test(token)) return { session: { id: '', csrf: token, expiresAt: 0 } };
    const session = { id: '', csrf: randomToken(), expiresAt: 0 };
    // The token costs the server nothing, so it may outlive an anonymous session: a page left open a while still posts.
    return { session, csrfCookie: this.cookieLine(CSRF_COOKIE, session.csrf, SIGNED_IN_LIFETIME_MS) };
  }

  /** Stores a draft that now holds some state; true when it did (send `cookie(session)`). */
  keep(session: Session): boolean {
    if (session.id !== '' || !STATE.some((key) => session[key] !== undefined)) return false;
    session.id = randomToken();
    session.expiresAt = Date.now() + ANONYMOUS_LIFETIME_MS;
    this.insert(session);
    return true;
  }

  /** A new id for a session whose privilege changes (sign-in): a planted cookie is worth nothing. */
  rotate(old: Session, changes: Partial<Session>): Session {
    this.sessions.delete(old.id);
    const fresh: Session = { ...changes, id: randomToken(), csrf: randomToken(), expiresAt: 0 };
    fresh.expiresAt = Date.now() + (signedIn(fresh) ? SIGNED_IN_LIFETIME_MS : ANONYMOUS_LIFETIME_MS);
    this.insert(fresh);
    return fresh;
  }

  destroy(session: Session): void {
    this.sessions.delete(session.id);
  }

  /** Ends every session of a user (after a password reset). A database store deletes by user id. */
  destroyUser(userId: string): void {
    for (const session of this.sessions.values()) if (session.userId === userId || session.pendingUserId === userId) this.sessions.delete(session.id);
  }

  cookie(session: Session): string {
    return this.cookieLine(COOKIE, session.id, session.expiresAt - Date.now());
  }

  clearedCookie(): string {
    return this.cookieLine(COOKIE, '', 0);
  }

  private cookieLine(name: string, value: string, lifetimeMs: number): string {
    return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}; Max-Age=${Math.max(0, Math.floor(lifetimeMs / 1000))}`;
  }

  private insert(session: Session): void {
    if (this.sessions.size >= this.maxSessions) this.makeRoom();
    this.sessions.set(session.id, session);
  }

  /** Drops the expired sessions, else the oldest anonymous one, else the oldest of all. */
  private makeRoom(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) if (session.expiresAt <= now) this.sessions.delete(session.id);
    if (this.sessions.size < this.maxSessions) return;
    // A Map iterates in insertion order: the first anonymous session found is the oldest.
    let victim: Session | undefined;
    for (const session of this.sessions.values()) {
      if (!signedIn(session)) {
        victim = session;
        break;
      }
    }
    victim ??= this.sessions.values().next().value;
    if (victim) this.sessions.delete(victim.id);
  }
}

function readCookie(header: string | null, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** Constant-time comparison of the submitted CSRF token with the session's. */
export function csrfMatches(session: Session, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

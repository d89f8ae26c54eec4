import { timingSafeEqual } from 'node:crypto';

/**
 * The app's own sessions (Gatehouse keeps none): an opaque random id in an HttpOnly, SameSite=Lax
 * cookie, the state in memory. A real deployment keeps them in its database or Redis; the shape
 * stays the same. Every session, signed in or not, has a CSRF token that every form carries.
 */
export interface Session {
  id: string;
  csrf: string;
  expiresAt: number;
  /** Set once the person is signed in. */
  userId?: string;
  /** Password or emailed code accepted, TOTP still to come. */
  pendingUserId?: string;
  emailSignInRequestId?: string;
  resetRequestId?: string;
  /** A TOTP key shown as a QR code and not yet confirmed with a code (standard base64). */
  pendingTotpKey?: string;
  passkeyChallengeId?: string;
  /** One message for the next page shown. */
  notice?: string;
}

const COOKIE = 'sid';
const LIFETIME_MS = 8 * 60 * 60 * 1000;

const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url');

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly secureCookies: boolean) {}

  /** The request's session, or a new anonymous one (the caller must then send `cookie(session)`). */
  load(cookieHeader: string | null): { session: Session; isNew: boolean } {
    const id = readCookie(cookieHeader, COOKIE);
    const found = id ? this.sessions.get(id) : undefined;
    if (found && found.expiresAt > Date.now()) return { session: found, isNew: false };
    if (found) this.sessions.delete(found.id);
    return { session: this.create(), isNew: true };
  }

  /** A new id for a session whose privilege changes (sign-in): a planted cookie is worth nothing. */
  rotate(old: Session, changes: Partial<Session>): Session {
    this.sessions.delete(old.id);
    const fresh = { ...this.create(), ...changes };
    this.sessions.set(fresh.id, fresh);
    return fresh;
  }

  destroy(session: Session): void {
    this.sessions.delete(session.id);
  }

  cookie(session: Session): string {
    return `${COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}; Max-Age=${LIFETIME_MS / 1000}`;
  }

  clearedCookie(): string {
    return `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}; Max-Age=0`;
  }

  private create(): Session {
    const session: Session = { id: randomToken(), csrf: randomToken(), expiresAt: Date.now() + LIFETIME_MS };
    this.sessions.set(session.id, session);
    return session;
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

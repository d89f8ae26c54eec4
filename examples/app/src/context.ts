import { Elysia } from 'elysia';
import { clientAddress } from './client-ip';
import type { GatehouseClient } from './gatehouse';
import { errorPage } from './html';
import type { Mailbox } from './mailbox';
import { csrfMatches, type Session, SessionStore } from './session';
import { stillSignedIn } from './session-check';

export interface AppDeps {
  gatehouse: GatehouseClient;
  mailbox: Mailbox;
  sessions: SessionStore;
  /** The name shown in authenticator apps next to the TOTP code. */
  issuer: string;
  /**
   * Behind a reverse proxy, the header it puts the caller's address in, e.g. 'x-forwarded-for'
   * (see client-ip.ts for which entry counts). Unset, the address of the connection is used. Never
   * set it when clients can reach the app without the proxy: the header would be theirs to write.
   */
  clientIpHeader?: string;
  /** Our own proxies' addresses, skipped from the right of the header's list. */
  trustedProxies?: readonly string[];
  /** Serve /mailbox (every code sent) to loopback callers. Development only; off by default. */
  devMailbox?: boolean;
  /** How often a signed-in session rereads its user from Gatehouse; default a minute. */
  recheckMs?: number;
}

/** Pages allow only this app's own scripts, styles and images (the QR code is inline SVG). */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/**
 * The base every page module builds on: security headers on every answer (error pages too), the
 * session (a signed-in one is checked against Gatehouse, see session-check.ts), the caller's address
 * passed on as Gatehouse's client_ip (so its per-address limits apply to people, not to this app), a
 * refusal of any POST whose CSRF token does not match, and a stored session only once a flow keeps
 * something in it.
 */
export function baseApp(deps: AppDeps) {
  return new Elysia()
    .onRequest(({ set }) => {
      Object.assign(set.headers, SECURITY_HEADERS);
    })
    .onError(({ code, error }) => {
      if (code === 'NOT_FOUND') return errorPage(404, 'There is no such page.');
      if (code === 'VALIDATION' || code === 'PARSE') return errorPage(400, 'The request could not be read.');
      // The details (Gatehouse's address among them) go to the log, never to the page.
      console.error('example app:', error instanceof Error ? error.message : error);
      return errorPage(503, 'Something went wrong on our side. Please try again in a moment.');
    })
    .derive(async ({ request, server, set }) => {
      const connection = server?.requestIP(request)?.address;
      const clientIp = clientAddress(deps.clientIpHeader ? request.headers.get(deps.clientIpHeader) : undefined, connection, { header: deps.clientIpHeader, trustedProxies: deps.trustedProxies });
      let { session, csrfCookie } = deps.sessions.load(request.headers.get('cookie'));
      if (session.userId && !(await stillSignedIn(deps.gatehouse, session, deps.recheckMs))) {
        deps.sessions.destroy(session);
        ({ session, csrfCookie } = deps.sessions.load(null));
        addCookie(set, deps.sessions.clearedCookie());
      }
      if (csrfCookie) addCookie(set, csrfCookie);
      return { session, clientIp, connection };
    })
    .onBeforeHandle(({ request, body, session }) => {
      if (request.method !== 'POST') return;
      const submitted = (body as Record<string, unknown> | undefined)?.csrf ?? request.headers.get('x-csrf-token');
      if (!csrfMatches(session, submitted)) return new Response('The form expired: go back, reload the page and try again.', { status: 403 });
    })
    .onAfterHandle(({ session, set }) => {
      if (deps.sessions.keep(session)) addCookie(set, deps.sessions.cookie(session));
    });
}

export type App = ReturnType<typeof baseApp>;

/** Adds a Set-Cookie line to the answer, keeping any set before. */
export function addCookie(set: { headers: Record<string, unknown> }, cookie: string): void {
  const before = set.headers['set-cookie'];
  set.headers['set-cookie'] = [...(before === undefined ? [] : Array.isArray(before) ? before : [before]), cookie];
}

/** Takes the one-time notice off the session, to show on the page being built. */
export function takeNotice(session: Session): string | undefined {
  const notice = session.notice;
  session.notice = undefined;
  return notice;
}

export const redirect = (location: string) => new Response(null, { status: 303, headers: { location } });

/** Reads a form field as a trimmed string ('' when absent). */
export const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
};

/** Passwords are sent exactly as typed: Gatehouse hashes them as given. */
export const rawField = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

import { Elysia } from 'elysia';
import type { GatehouseClient } from './gatehouse';
import { csrfMatches, type Session, SessionStore } from './session';
import type { Mailbox } from './mailbox';

export interface AppDeps {
  gatehouse: GatehouseClient;
  mailbox: Mailbox;
  sessions: SessionStore;
  /** The name shown in authenticator apps next to the TOTP code. */
  issuer: string;
  /**
   * Behind a reverse proxy, the header it puts the caller's address in (its first entry is used),
   * e.g. 'x-forwarded-for'. Unset, the address of the connection is used. Never trust a header that
   * a client can send straight to the app: Gatehouse's per-address limits would be theirs to dodge.
   */
  clientIpHeader?: string;
}

/**
 * The base every page module builds on: loads the session (a new anonymous one gets its cookie),
 * passes the caller's address on as Gatehouse's client_ip (so its per-address limits apply to
 * people, not to this app), and refuses any POST whose CSRF token does not match the session's.
 */
export function baseApp(deps: AppDeps) {
  return new Elysia()
    .derive(({ request, server, set }) => {
      const { session, isNew } = deps.sessions.load(request.headers.get('cookie'));
      if (isNew) set.headers['set-cookie'] = deps.sessions.cookie(session);
      const forwarded = deps.clientIpHeader ? request.headers.get(deps.clientIpHeader)?.split(',')[0]?.trim() : undefined;
      const clientIp = forwarded || server?.requestIP(request)?.address;
      return { session, clientIp };
    })
    .onBeforeHandle(({ request, body, session }) => {
      if (request.method !== 'POST') return;
      const submitted = (body as Record<string, unknown> | undefined)?.csrf ?? request.headers.get('x-csrf-token');
      if (!csrfMatches(session, submitted)) return new Response('The form expired: go back, reload the page and try again.', { status: 403 });
    });
}

export type App = ReturnType<typeof baseApp>;

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

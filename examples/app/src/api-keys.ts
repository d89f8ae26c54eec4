import { type App, type AppDeps, field, redirect, takeNotice } from './context';
import { form, html, page } from './html';
import type { Session } from './session';

const REFUSED: Record<string, string> = {
  INVALID_API_KEY: 'not a valid key',
  API_KEY_EXPIRED: 'this key has expired',
  INSUFFICIENT_SCOPE: 'this key may not read the profile',
  USER_DISABLED: 'this account is disabled',
};

/**
 * API keys a person makes for their own scripts: Gatehouse makes and checks them, and keeps only a
 * hash, so the key is shown once. GET /api/me is this app's own API, which takes such a key.
 */
export function apiKeyRoutes(app: App, deps: AppDeps) {
  return app
    .get('/account/api-keys', async ({ session }) => (session.userId ? keysPage(deps, session) : redirect('/sign-in')))
    .post('/account/api-keys', async ({ body, session }) => {
      if (!session.userId) return redirect('/sign-in');
      const { data, error } = await deps.gatehouse.createApiKey({ id: session.userId, name: field(body, 'name'), scopes: ['profile:read'] });
      if (error) return keysPage(deps, session, error.code === 'NOT_ALLOWED' ? 'You have 100 keys already: delete one first.' : 'Please give the key a name of 1 to 64 characters.');
      return keysPage(deps, session, undefined, data.key);
    })
    .post('/account/api-keys/:key_id/delete', async ({ params, session }) => {
      if (!session.userId) return redirect('/sign-in');
      await deps.gatehouse.deleteApiKey({ id: session.userId, key_id: params.key_id });
      session.notice = 'The key is deleted: it no longer works.';
      return redirect('/account/api-keys');
    })
    .get('/api/me', async ({ request }) => {
      const key = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? '';
      const { data, error } = await deps.gatehouse.verifyApiKey({ key, scopes: ['profile:read'] });
      if (error) return Response.json({ error: REFUSED[error.code] ?? 'try again later' }, { status: error.status === 400 ? 401 : 503 });
      return Response.json({ email: data.user.email, key: data.api_key.name });
    });
}

async function keysPage(deps: AppDeps, session: Session, error?: string, newKey?: string): Promise<Response> {
  const { data } = await deps.gatehouse.listApiKeys({ id: session.userId! });
  return page({ title: 'API keys', csrf: session.csrf, signedIn: true, error, notice: takeNotice(session) }, html`
${newKey ? html`<p>Your new key, shown only now: <code id="api-key-new">${newKey}</code>. Send it as <code>Authorization: Bearer …</code> to <code>/api/me</code>.</p>` : ''}
<ul id="api-keys">${(data ?? []).map((key) => html`<li><span class="api-key-name">${key.name}</span> <code>${key.start}…</code>
  ${key.last_used_at ? `last used ${new Date(key.last_used_at * 1000).toISOString()}` : 'never used'}
  ${form(`/account/api-keys/${key.id}/delete`, session.csrf, html`<button class="api-key-delete">Delete</button>`)}</li>`)}</ul>
${form('/account/api-keys', session.csrf, html`
  <label>Name <input name="name" maxlength="64" required></label>
  <button id="api-key-create">Create a key</button>`)}
<p><a href="/account">Back to your account</a></p>`);
}

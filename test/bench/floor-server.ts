// The floor of the stack (issue 26): a minimal Elysia app doing GET /users/{id}'s work by hand.
// It compares the Authorization header with the secret, looks the user up by primary key with
// bun:sqlite (the same columns as Gatehouse's view) and answers it as JSON. Nothing else: no request
// id, no log line, no metrics, no size check. Run as its own process: bun floor-server.ts DIR SECRET.
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { Elysia } from 'elysia';

/** The app alone, also for read-profile.ts, which calls its handler in-process. */
export function floorApp(dir: string, secret: string) {
  const db = new Database(join(dir, 'gatehouse.db'));
  const byId = db.query<
    { id: string; created_at: number; email: string | null; email_verified: number; registered_totp: number; passkey_count: number; disabled: number; disabled_until: number | null },
    [string]
  >(
    // The row alone, as Gatehouse reads it since migration 0011 keeps the TOTP and passkey columns on it.
    'select id, created_at, email, email_verified, registered_totp, passkey_count, disabled, disabled_until from users where id = ?',
  );

  return new Elysia()
    .get('/users/:id', ({ params, request, status }) => {
      if (request.headers.get('authorization') !== secret) return status(401, { error: 'NOT_AUTHENTICATED' });
      const row = byId.get(params.id);
      if (row === null) return status(404, { error: 'NOT_FOUND' });
      // A passed disabled_until reads as enabled (API.md §14), as in Gatehouse's view.
      const disabled = row.disabled === 1 && (row.disabled_until === null || row.disabled_until > Date.now() / 1000);
      return {
        id: row.id,
        created_at: row.created_at,
        email: row.email,
        email_verified: row.email_verified === 1,
        registered_totp: row.registered_totp === 1,
        passkey_count: row.passkey_count,
        disabled,
        disabled_until: disabled ? row.disabled_until : null,
      };
    });
}

if (import.meta.main) {
  const [dir, secret] = process.argv.slice(2);
  if (dir === undefined || secret === undefined) throw new Error('usage: bun floor-server.ts DIR SECRET');
  const app = floorApp(dir, secret).listen({ port: 0, hostname: '127.0.0.1' });
  process.stdout.write(`${JSON.stringify({ message: `listening on http://127.0.0.1:${app.server!.port}`, port: app.server!.port })}\n`);
  process.on('SIGTERM', () => {
    app.stop(true).then(() => process.exit(0));
  });
}

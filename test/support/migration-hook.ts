import { afterAll } from 'bun:test';
import { parseWebhookSecret } from '../../src/security/webhook-signature';
import { newWebhookSecret } from './webhook-receiver';

export interface HookRequest {
  body: Record<string, unknown>;
  headers: Record<string, string>;
  /** Whether the standardwebhooks package accepted its signature. */
  verified: boolean;
  at: number;
}

/**
 * Starts test/support/migration-hook-server.ts as a process of its own, knowing `users` (email →
 * password), and stops it after the file's tests. The target is what --password-migration-url and
 * --password-migration-secret would configure.
 */
export async function startMigrationHook(users: Record<string, string>) {
  const secret = newWebhookSecret();
  const proc = Bun.spawn([process.execPath, 'run', `${import.meta.dir}/migration-hook-server.ts`], {
    env: { ...process.env, HOOK_SECRET: secret, HOOK_USERS: JSON.stringify(users) },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('\n')) {
    const { done, value } = await reader.read();
    if (done) throw new Error('the migration hook did not start');
    out += new TextDecoder().decode(value);
  }
  const port = Number(out.trim());
  const origin = `http://127.0.0.1:${port}`;
  return {
    secret,
    url: `${origin}/hooks/password`,
    target: { url: `${origin}/hooks/password`, key: parseWebhookSecret(secret)! },
    requests: async (): Promise<HookRequest[]> => (await fetch(`${origin}/requests`)).json() as Promise<HookRequest[]>,
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}
export type MigrationHook = Awaited<ReturnType<typeof startMigrationHook>>;

/** The hook for this file's tests, started before the first and stopped after the last. */
export function migrationHookOfThisFile(users: Record<string, string>): () => Promise<MigrationHook> {
  let started: Promise<MigrationHook> | undefined;
  afterAll(async () => {
    await (await started?.catch(() => undefined))?.stop();
  });
  return () => (started ??= startMigrationHook(users));
}

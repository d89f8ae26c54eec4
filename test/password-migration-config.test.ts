import { describe, expect, test } from 'bun:test';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseServeConfig, UsageError } from '../src/cli/config';
import { parseWebhookSecret } from '../src/security/webhook-signature';
import { runToExit, tempDirsOfThisFile } from './support/server-process';
import { newWebhookSecret } from './support/webhook-receiver';

// The flags of API.md §19: --password-migration-url (https, or http to loopback only) and its secret.
const SECRET = newWebhookSecret();
const KEY = parseWebhookSecret(SECRET)!;
const tempDir = tempDirsOfThisFile();
const refusal = (args: string[], env: Record<string, string> = {}): string => {
  try {
    parseServeConfig(args, env);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`accepted: ${args.join(' ')}`);
};
const hookOf = (args: string[], env: Record<string, string> = {}) => parseServeConfig(args, env).passwordMigration;

describe('--password-migration-url and --password-migration-secret', () => {
  test('neither: no hook', () => {
    expect(hookOf([])).toBeNull();
  });

  test.each(['https://old.example/hook?token=abc', 'http://127.0.0.1:9000/hook', 'http://127.8.9.10/hook', 'http://localhost:8080/', 'http://[::1]:8080/hook'])('%s is accepted', (url) => {
    expect(hookOf(['--password-migration-url', url, '--password-migration-secret', SECRET])).toEqual({ url, key: KEY });
  });

  test('from the environment, the secret also from a file (mode 0600); a flag beats its variable', () => {
    const file = join(tempDir(), 'hook-secret');
    writeFileSync(file, `${SECRET}\n`);
    chmodSync(file, 0o600);
    const env = { GATEHOUSE_PASSWORD_MIGRATION_URL: 'https://old.example/hook', GATEHOUSE_PASSWORD_MIGRATION_SECRET_FILE: file };
    expect(hookOf([], env)).toEqual({ url: 'https://old.example/hook', key: KEY });
    expect(hookOf(['--password-migration-url', 'https://flag.example/'], env)?.url).toBe('https://flag.example/');
  });

  test.each([
    [['--password-migration-url', 'http://old.example/hook?token=hunter2'], 'needs --password-migration-secret'],
    [['--password-migration-secret', SECRET], 'needs --password-migration-url'],
    [['--password-migration-url', 'http://old.example/hook?token=hunter2', '--password-migration-secret', SECRET], 'must be https, or http to a loopback address'],
    [['--password-migration-url', 'http://10.0.0.8/hook?token=hunter2', '--password-migration-secret', SECRET], 'not http to 10.0.0.8'],
    [['--password-migration-url', 'http://127.0.0.1.nip.io/hook?token=hunter2', '--password-migration-secret', SECRET], 'must be https'],
    [['--password-migration-url', 'ftp://old.example/hook?token=hunter2', '--password-migration-secret', SECRET], 'expected a http or https URL'],
    [['--password-migration-url', 'https://old.example/', '--password-migration-secret', 'hunter2'], 'whsec_ and the base64 of 24 to 64 random bytes'],
    [['--password-migration-url', 'https://old.example/', '--password-migration-secret', SECRET, '--password-migration-secret-file', '/x'], 'not both'],
  ])('%j is refused', (args, message) => {
    const text = refusal(args);
    expect(text).toContain(message);
    // Neither the URL's token nor a secret is echoed.
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain(SECRET);
  });

  test('gatehouse serve with http to another host: a clear message and exit 2, nothing served', async () => {
    const answer = await runToExit(['serve', '--port', '0', '--dir', tempDir(), '--password-migration-url', 'http://old.example/hook', '--password-migration-secret', SECRET]);
    expect(answer.exitCode).toBe(2);
    expect(answer.stderr).toMatch(/^gatehouse: invalid --password-migration-url: it receives passwords, so it must be https, or http to a loopback address [^\n]+\n$/);
    expect(answer.stdout).toBe('');
  });
});

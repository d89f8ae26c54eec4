import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { REPO_ROOT, runToExit } from './support/server-process';

/**
 * The client's types are the contract's codes and fields: test/client/types-check.ts holds calls
 * that must compile and `@ts-expect-error` lines (a mistyped code, a code the operation never answers,
 * a misspelt field, a missing path id, an unknown operation) that must not. tsc fails on either kind
 * of surprise, an error where none is expected or an expected error that did not happen.
 */
describe('@gatehouse/client types', () => {
  test('tsc accepts the right calls and refuses every wrong code, field and operation', async () => {
    const result = await runToExit(['-p', join(REPO_ROOT, 'test/client/tsconfig.json')], { command: [join(REPO_ROOT, 'node_modules/.bin/tsc')], timeoutMs: 120_000 });
    expect({ exitCode: result.exitCode, output: result.stdout + result.stderr }).toEqual({ exitCode: 0, output: '' });
  }, 150_000);
});

import { describe, expect, test } from 'bun:test';
import { parseServeConfig, UsageError } from '../src/cli/config';
import { runToExit, tempDirsOfThisFile } from './support/server-process';

/** --webauthn-rp-id, --webauthn-rp-name, --webauthn-origin and their variables (API.md §8, §13). */
const tempDir = tempDirsOfThisFile();
const relyingParty = (args: string[], env: Record<string, string> = {}) => parseServeConfig(args, env).relyingParty;
const refusal = (args: string[], env: Record<string, string> = {}) => {
  try {
    parseServeConfig(args, env);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('WebAuthn configuration', () => {
  test('off without an RP id', () => {
    expect(relyingParty([])).toBeNull();
  });

  test('the RP id alone: named after itself, with its https origin', () => {
    expect(relyingParty(['--webauthn-rp-id', 'Example.COM'])).toEqual({ id: 'example.com', name: 'example.com', origins: ['https://example.com'] });
  });

  test('repeatable origins, normalised, on the RP id or its subdomains; localhost over http', () => {
    const args = ['--webauthn-rp-id=example.com', '--webauthn-rp-name', 'Example Inc', '--webauthn-origin', 'https://example.com/', '--webauthn-origin=https://login.example.com:443', '--webauthn-origin', 'https://app.example.com:8443'];
    expect(relyingParty(args)).toEqual({ id: 'example.com', name: 'Example Inc', origins: ['https://example.com', 'https://login.example.com', 'https://app.example.com:8443'] });
    expect(relyingParty(['--webauthn-rp-id', 'localhost', '--webauthn-origin', 'http://localhost:3000'])?.origins).toEqual(['http://localhost:3000']);
  });

  test('variables, comma-separated origins; any --webauthn-origin flag replaces the variable\'s list', () => {
    const env = { GATEHOUSE_WEBAUTHN_RP_ID: 'example.com', GATEHOUSE_WEBAUTHN_RP_NAME: 'Ex', GATEHOUSE_WEBAUTHN_ORIGINS: 'https://example.com, https://a.example.com' };
    expect(relyingParty([], env)).toEqual({ id: 'example.com', name: 'Ex', origins: ['https://example.com', 'https://a.example.com'] });
    expect(relyingParty(['--webauthn-origin', 'https://b.example.com'], env)?.origins).toEqual(['https://b.example.com']);
    // The flag beats the RP id variable; the variable's origins still apply, and must fit it.
    expect(refusal(['--webauthn-rp-id', 'other.example'], env)).toContain('not on the RP id other.example');
  });

  test('bad values are usage errors naming them', () => {
    expect(refusal(['--webauthn-origin', 'https://example.com'])).toContain('need --webauthn-rp-id');
    expect(refusal(['--webauthn-rp-name', 'x'])).toContain('need --webauthn-rp-id');
    for (const id of ['https://example.com', 'example.com:443', '192.0.2.1', 'exa mple.com', '-x.com', 'a..b']) {
      expect(refusal([`--webauthn-rp-id=${id}`])).toContain(`invalid --webauthn-rp-id '${id}'`);
    }
    expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-rp-name', ' '])).toContain('--webauthn-rp-name');
    for (const origin of ['example.com', 'https://example.com/login', 'https://example.com?x', 'ftp://example.com', 'https://u@example.com']) {
      expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-origin', origin])).toContain(`invalid --webauthn-origin '${origin}'`);
    }
    expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://example.org'])).toContain('not on the RP id example.com');
    expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://badexample.com'])).toContain('not on the RP id');
    expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-origin', 'http://example.com'])).toContain('only on localhost');
    expect(refusal(['--webauthn-rp-id', 'example.com', '--webauthn-origin'])).toContain('--webauthn-origin needs a value');
  });

  test('the program stops with exit code 2 and one line', async () => {
    const result = await runToExit(['serve', '--dir', tempDir(), '--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://example.org']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('not on the RP id example.com');
  });
});

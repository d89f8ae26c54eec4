import { describe, expect, test } from 'bun:test';
import { parseServeConfig, UsageError } from '../src/cli/config';

const parse = (args: string[], env: Record<string, string> = {}) => parseServeConfig(args, env);
const refusal = (args: string[], env: Record<string, string> = {}): string => {
  try {
    parse(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    expect(error.message).not.toContain('\n');
    return error.message;
  }
  throw new Error(`accepted ${JSON.stringify(args)}`);
};

describe('serve flags, parsed with node:util parseArgs', () => {
  test('defaults', () => {
    expect(parse([])).toMatchObject({ port: 4000, host: '127.0.0.1', dir: './gatehouse_data', secret: null, secretFile: null, pwnedCheck: 'online', docs: true });
  });

  test('--flag value and --flag=value; the last of a repeated flag wins; a flag beats its variable; an empty variable is unset', () => {
    expect(parse(['--port', '81', '--host=0.0.0.0', '--port=82'], { GATEHOUSE_PORT: '83', GATEHOUSE_HOST: '' })).toMatchObject({ port: 82, host: '0.0.0.0' });
    expect(parse([], { GATEHOUSE_PORT: '83', GATEHOUSE_DATA_DIR: '' })).toMatchObject({ port: 83, dir: './gatehouse_data' });
    expect(parse(['--no-docs']).docs).toBe(false);
  });

  test.each([
    [['--bogus'], "unknown argument '--bogus'"],
    [['--verbose=yes'], "unknown argument '--verbose'"],
    [['-p', '1'], "unknown argument '-p'"],
    [['extra'], "unexpected argument 'extra'"],
    [['--port'], '--port needs a value'],
    [['--port', '--host', 'x'], '--port needs a value'],
    [['--no-docs=yes'], "'--no-docs' does not take an argument"],
    [['--port='], "invalid port ''"],
    [['--secret-file='], '--secret-file must not be empty'],
  ])('%j is refused on one line', (args, message) => {
    expect(refusal(args)).toContain(message);
  });
});

describe('flags of API.md §10 to §13, parsed and checked', () => {
  const secret = ['--secret', 'a-good-secret-0123456789'];

  test('absent: their defaults', () => {
    expect(parse([])).toMatchObject({ databaseUrl: null, redisUrl: null, metrics: true, webhook: null, eventsRetentionDays: 90, relyingParty: null });
  });

  test('valid values, from flags and variables', () => {
    const config = parse(
      [...secret, '--database-url', 'postgres://gh:pw@db:5432/gatehouse', '--no-metrics', '--webauthn-origin', 'https://a.example.com', '--webauthn-origin=https://example.com:8443'],
      {
        GATEHOUSE_REDIS_URL: 'rediss://cache:6380',
        GATEHOUSE_WEBHOOK_URL: 'https://hooks.example/in',
        GATEHOUSE_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
        GATEHOUSE_EVENTS_RETENTION_DAYS: '30',
        GATEHOUSE_WEBAUTHN_RP_ID: 'Example.COM',
        GATEHOUSE_WEBAUTHN_ORIGINS: 'https://ignored.example',
      },
    );
    expect(config).toMatchObject({
      databaseUrl: 'postgres://gh:pw@db:5432/gatehouse',
      redisUrl: 'rediss://cache:6380',
      metrics: false,
      webhook: { url: 'https://hooks.example/in' },
      eventsRetentionDays: 30,
      relyingParty: { id: 'example.com', name: 'example.com', origins: ['https://a.example.com', 'https://example.com:8443'] },
    });
    expect(parse([], { GATEHOUSE_WEBAUTHN_RP_ID: 'example.com', GATEHOUSE_WEBAUTHN_RP_NAME: 'Example', GATEHOUSE_WEBAUTHN_ORIGINS: 'https://a.example.com,https://b.example.com' }).relyingParty).toEqual({
      id: 'example.com',
      name: 'Example',
      origins: ['https://a.example.com', 'https://b.example.com'],
    });
  });

  test('a keys file is a configured secret for --database-url (API.md §17); its path is kept, read by serve', () => {
    expect(parse(['--keys-file', '/etc/gatehouse/keys', '--database-url', 'postgres://db/x'])).toMatchObject({ keysFile: '/etc/gatehouse/keys', secret: null, secretFile: null, databaseUrl: 'postgres://db/x' });
    expect(parse([], { GATEHOUSE_KEYS_FILE: '/k', GATEHOUSE_DATABASE_URL: 'postgres://db/x' })).toMatchObject({ keysFile: '/k' });
    expect(parse([])).toMatchObject({ keysFile: null });
  });

  test.each([
    [['--database-url', 'mysql://u:hunter2@db/x'], 'expected a postgres or postgresql URL'],
    [['--database-url', 'postgres://db/x'], 'needs a configured secret'],
    [['--redis-url', 'http://cache'], 'expected a redis or rediss URL'],
    [['--webhook-url', 'https://hooks.example'], 'needs --webhook-secret'],
    [['--webhook-secret', `whsec_${Buffer.alloc(32).toString('base64')}`], 'needs --webhook-url'],
    [['--webhook-url', 'https://hooks.example', '--webhook-secret', 'short'], 'whsec_ and the base64 of 24 to 64 random bytes'],
    [['--webhook-url', 'https://hooks.example', '--webhook-secret', Buffer.alloc(32).toString('base64')], 'whsec_ and the base64 of 24 to 64 random bytes'],
    [['--webhook-url', 'ftp://hooks.example', '--webhook-secret', Buffer.alloc(32).toString('base64')], "invalid --webhook-url 'ftp://hooks.example'"],
    [['--events-retention-days', '0'], 'expected 1 to 36500'],
    [['--events-retention-days', '1.5'], 'expected 1 to 36500'],
    [['--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://other.example'], 'is not on the RP id'],
    [['--webauthn-rp-id', 'https://example.com', '--webauthn-origin', 'https://example.com'], 'expected a domain'],
    [['--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://example.com/login'], 'expected an origin'],
    [['--webauthn-origin', 'https://example.com'], 'need --webauthn-rp-id'],
  ])('%j is refused', (args, message) => {
    const text = refusal(args);
    expect(text).toContain(message);
    expect(text).not.toContain('hunter2');
  });
});

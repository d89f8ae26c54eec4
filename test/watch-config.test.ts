import { describe, expect, test } from 'bun:test';
import { parseServeConfig, UsageError } from '../src/cli/config';
import { runToExit } from './support/server-process';
import { newWebhookSecret } from './support/webhook-receiver';

/** The flags of API.md §8 for §12: --no-metrics, --webhook-url with --webhook-secret, --events-retention-days. */
const SECRET = newWebhookSecret();
const parse = (args: string[], env: Record<string, string> = {}) => parseServeConfig(args, env);
const refusal = (args: string[], env: Record<string, string> = {}) => {
  try {
    parse(args, env);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return error.message;
  }
};

describe('watching flags', () => {
  test('defaults: metrics on, no webhook, events kept 90 days, timings unscaled', () => {
    const config = parse([]);
    expect({ metrics: config.metrics, webhook: config.webhook, days: config.eventsRetentionDays, scale: config.webhookTimingScale }).toEqual({
      metrics: true,
      webhook: null,
      days: 90,
      scale: 1,
    });
  });

  test('flags and their variables; a flag beats its variable', () => {
    expect(parse(['--no-metrics']).metrics).toBe(false);
    const config = parse(['--webhook-url', 'https://hooks.example.com/in?token=1', `--webhook-secret=${SECRET}`, '--events-retention-days', '7']);
    expect(config.webhook?.url).toBe('https://hooks.example.com/in?token=1');
    expect(config.webhook?.key).toHaveLength(32);
    expect(config.eventsRetentionDays).toBe(7);
    const fromEnv = parse([], { GATEHOUSE_WEBHOOK_URL: 'http://127.0.0.1:9000/', GATEHOUSE_WEBHOOK_SECRET: SECRET, GATEHOUSE_EVENTS_RETENTION_DAYS: '30' });
    expect([fromEnv.webhook?.url, fromEnv.eventsRetentionDays]).toEqual(['http://127.0.0.1:9000/', 30]);
    expect(parse(['--events-retention-days', '5'], { GATEHOUSE_EVENTS_RETENTION_DAYS: '30' }).eventsRetentionDays).toBe(5);
    expect(parse([], { GATEHOUSE_WEBHOOK_TIMING_SCALE: '0.01' }).webhookTimingScale).toBe(0.01);
  });

  test('bad values are usage errors that never echo the webhook secret', () => {
    const cases: [string[], Record<string, string>?][] = [
      [['--webhook-url', 'https://example.com/hook']],
      [['--webhook-secret', SECRET]],
      [['--webhook-url', 'ftp://example.com/hook', '--webhook-secret', SECRET]],
      [['--webhook-url', 'not a url', '--webhook-secret', SECRET]],
      [['--webhook-url', 'https://example.com/hook', '--webhook-secret', 'plain-text-secret-0123456789']],
      [['--webhook-url', 'https://example.com/hook', '--webhook-secret', `whsec_${Buffer.alloc(16).toString('base64')}`]],
      [['--events-retention-days', '0']],
      [['--events-retention-days', '1.5']],
      [['--events-retention-days', '36501']],
      [[], { GATEHOUSE_WEBHOOK_TIMING_SCALE: '2' }],
      [[], { GATEHOUSE_WEBHOOK_TIMING_SCALE: 'fast' }],
    ];
    for (const [args, env] of cases) {
      const message = refusal(args, env);
      expect({ args, accepted: message === 'accepted' }).toEqual({ args, accepted: false });
      expect(message).not.toContain('plain-text-secret');
      expect(message).not.toContain(SECRET.slice(6, 20));
    }
  });

  test('the program stops with exit code 2 and one line', async () => {
    const result = await runToExit(['serve', '--webhook-url', 'https://example.com/hook', '--webhook-secret', 'nope-nope-nope-nope']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('gatehouse: invalid --webhook-secret: expected whsec_ and the base64 of 24 to 64 random bytes\n');
  });

  test('--help names the new flags', async () => {
    const result = await runToExit(['--help']);
    for (const flag of ['--no-metrics', '--webhook-url', '--webhook-secret', '--events-retention-days']) expect(result.stdout).toContain(flag);
  });
});

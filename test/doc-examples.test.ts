import { describe, expect, test } from 'bun:test';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_STATUS } from '../src/errors';
import { EVENT_TYPES } from '../src/events/model';
import { LIMIT_NAMES } from '../src/limits/rate-limit';
import { ensureDebianPackages, reportSkipped } from './support/debian-packages';
import { freePort } from './support/engine-process';
import { FIREBASE_EXAMPLE, PASSWORD, VECTORS } from './password-formats.vectors';
import { cleanEnv, REPO_ROOT, startServer, tempDirsOfThisFile } from './support/server-process';

/**
 * The docs' shell examples, run as written: every ```sh block of README.md and docs/*.md, unless the
 * line before it is `<!-- not checked: REASON -->`. A page's blocks run in order as one bash session
 * (`set -euo pipefail`, so an unassigned variable or a failing command stops it) in a fresh directory
 * laid out like a clone (its files are links to this repository's), where `npx gatehouse` resolves as
 * it does in a clone. curl gets --fail-with-body, so any 4xx or 5xx answer fails the page. A page that
 * does not start a server itself gets one started before its blocks (`npx gatehouse serve &`) and
 * stopped after them (`kill $!`). Two changes to what the reader runs: the server's port is a free
 * one (GATEHOUSE_PORT, and `localhost:4000` in the examples becomes that port), and the breach check
 * is offline (GATEHOUSE_PWNED_CHECK; there is no network here).
 */
const PAGES = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const CLONE_ENTRIES = ['package.json', 'bin', 'src', 'node_modules', 'drizzle', 'bunfig.toml', 'tsconfig.json', 'examples'];
const tempDir = tempDirsOfThisFile();

interface Block {
  line: number;
  code: string;
  /** Null when checked. */
  notChecked: string | null;
  /** Run on its own with sample input (below) instead of in the page's session. */
  onSamples: boolean;
}

const ON_SAMPLES = '<!-- checked on sample exports in test/doc-examples.test.ts -->';

function shellBlocks(page: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('```')) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (lines[i] === '```sh') {
      const reason = /^<!-- not checked: (.+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? null;
      blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), notChecked: reason, onSamples: lines[i - 1] === ON_SAMPLES });
    }
    i = end;
  }
  return blocks;
}

const tools = await ensureDebianPackages([
  { name: 'curl', provides: '/usr/bin/curl' },
  { name: 'jq', provides: '/usr/bin/jq' },
  { name: 'openssl', provides: '/usr/bin/openssl' },
]);
const skip = reportSkipped('the docs examples need curl, jq and openssl', tools);

/** Processes whose working directory is `dir`: what a page's session left running. */
function processesIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^[0-9]+$/.test(name))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === dir;
      } catch {
        return false;
      }
    })
    .map(Number);
}

interface Extras {
  /** Files to put in the directory first, by name. */
  files?: Record<string, string>;
  env?: Record<string, string>;
  /** Run after the blocks, before the server stops. */
  after?: string;
}

async function runSession(page: string, blocks: Block[], extras: Extras = {}): Promise<{ exitCode: number; output: string; leftRunning: number[] }> {
  const clone = tempDir();
  for (const entry of CLONE_ENTRIES) symlinkSync(join(REPO_ROOT, entry), join(clone, entry));
  for (const [name, text] of Object.entries(extras.files ?? {})) writeFileSync(join(clone, name), text);
  mkdirSync(join(clone, '.npm'));
  const port = await freePort();
  const code = blocks.map((block) => `# ${page}:${block.line}\n${block.code}`).join('\n');
  const startsServer = /^npx gatehouse serve( > \S+)? &$/m.test(code);
  const script = [
    'exec 2>&1',
    'set -euo pipefail',
    'curl() { command curl --fail-with-body "$@"; }',
    ...(startsServer ? [] : ['npx gatehouse serve > server.log 2>&1 &', 'until curl -so /dev/null localhost:4000/health; do sleep 0.2; done']),
    code,
    extras.after ?? '',
    ...(startsServer ? [] : ['kill $!']),
  ]
    .join('\n')
    .replaceAll(/(localhost|127\.0\.0\.1):4000\b/g, `localhost:${port}`);
  // Into a file, not a pipe: a server the session left running would hold a pipe open.
  const output = join(clone, 'session-output.txt');
  const proc = Bun.spawn(['bash', '-c', script], {
    cwd: clone,
    env: cleanEnv({ GATEHOUSE_PORT: String(port), GATEHOUSE_PWNED_CHECK: 'offline', npm_config_cache: join(clone, '.npm'), ...extras.env }),
    stdout: Bun.file(output),
    stderr: 'inherit',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 100_000);
  const exitCode = await proc.exited;
  clearTimeout(timer);
  // kill $! stops the server behind npx within a moment; whatever is still there after 5 s was left behind.
  const deadline = Date.now() + 5_000;
  while (processesIn(clone).length > 0 && Date.now() < deadline) await Bun.sleep(50);
  const leftRunning = processesIn(clone);
  for (const pid of leftRunning) process.kill(pid, 'SIGKILL');
  return { exitCode, output: readFileSync(output, 'utf8').slice(-4000), leftRunning };
}

describe.skipIf(skip)('the shell examples of the README and docs/ run as written', () => {
  for (const page of PAGES) {
    const checked = shellBlocks(page).filter((block) => block.notChecked === null && !block.onSamples);
    if (checked.length === 0) continue;
    test(`${page}: its ${checked.length} examples, as one session`, async () => {
      const result = await runSession(page, checked);
      expect({ page, exitCode: result.exitCode, output: result.exitCode === 0 ? '' : result.output }).toEqual({ page, exitCode: 0, output: '' });
      expect({ page, leftRunning: result.leftRunning }).toEqual({ page, leftRunning: [] });
    }, 120_000);
  }
});

/**
 * The guides that turn another system's export into lines, run on small exports in that system's
 * layout; and the move without hashes, its hook asking a stand-in for Auth0.
 */
describe.skipIf(skip)('the "Moving from" guides for Firebase and Auth0, and the move without hashes, on sample input', () => {
  const guide = (heading: string) => {
    const text = readFileSync(join(REPO_ROOT, 'docs/migrating.md'), 'utf8');
    const from = text.indexOf(`## ${heading}`);
    const block = shellBlocks('docs/migrating.md').find((b) => b.onSamples && text.split('\n').slice(0, b.line).join('\n').length > from)!;
    expect(block).toBeDefined();
    return block;
  };
  const login = (email: string, password: string) =>
    `curl -s -H "Authorization: $(cat gatehouse_data/secret)" localhost:4000/authenticate/password -d '${JSON.stringify({ email, password })}' | jq -e '.email == "${email}"'`;
  const hashOf = (label: string) => VECTORS.find((v) => v.label === label)!.hash;

  test('Firebase: auth:export JSON and the project parameters → lines that sign in with the old password', async () => {
    // Firebase's published example: its project parameters, and a user's salt and hash.
    const [, , , salt, passwordHash, separator, signerKey] = FIREBASE_EXAMPLE.hash.split('$');
    const users = {
      users: [
        { localId: 'fb-1', email: 'user1@example.com', emailVerified: true, passwordHash, salt, createdAt: '1700000000123' },
        { localId: 'fb-2', email: 'google-only@example.com', providerUserInfo: [{ providerId: 'google.com' }], createdAt: '1700000000456' },
      ],
    };
    const result = await runSession('docs/migrating.md (Firebase)', [guide('Moving from Firebase Authentication')], {
      files: { 'users.json': JSON.stringify(users) },
      env: { SIGNER_KEY: signerKey!, SALT_SEPARATOR: separator! },
      after: [`test "$(wc -l < users.ndjson)" = 1`, login('user1@example.com', FIREBASE_EXAMPLE.password)].join('\n'),
    });
    expect({ exitCode: result.exitCode, output: result.exitCode === 0 ? '' : result.output }).toEqual({ exitCode: 0, output: '' });
    expect(result.leftRunning).toEqual([]);
  }, 120_000);

  test('Auth0: the password-hash export → lines that sign in with the old password', async () => {
    const lines = [
      { _id: { $oid: '60425da93519d90068f82966' }, email: 'ada@example.com', email_verified: true, passwordHash: hashOf('$2b$'), connection: 'Username-Password-Authentication' },
      { _id: { $oid: '60425da93519d90068f82967' }, alt_id: 'legacy-7', identifiers: [{ type: 'email', value: 'grace@example.com', verified: true }], passwordHash: hashOf('$2a$'), connection: 'Username-Password-Authentication' },
    ];
    const result = await runSession('docs/migrating.md (Auth0)', [guide('Moving from Auth0')], {
      files: { 'auth0-password-hashes.ndjson': lines.map((line) => JSON.stringify(line)).join('\n') + '\n' },
      after: [
        login('ada@example.com', PASSWORD),
        login('grace@example.com', PASSWORD),
        `curl -s -H "Authorization: $(cat gatehouse_data/secret)" 'localhost:4000/users/auth0%7Clegacy-7' | jq -e '.email_verified'`,
      ].join('\n'),
    });
    expect({ exitCode: result.exitCode, output: result.exitCode === 0 ? '' : result.output }).toEqual({ exitCode: 0, output: '' });
    expect(result.leftRunning).toEqual([]);
  }, 120_000);

  // Its Auth0 hook (examples/password-migration-hook.ts) against a stand-in for Auth0's token endpoint.
  test('No hashes to export: import without a hash, sign in through the hook, watch the gauge, remove the hook: the password stays', async () => {
    const client = { id: 'gatehouse-migration', secret: 'stand-in client secret' };
    const password = 'the password Mary had at Auth0';
    const asked: string[] = [];
    const auth0 = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const body = (await request.json()) as Record<string, string>;
        asked.push(body.username!);
        const grant = body.grant_type === 'http://auth0.com/oauth/grant-type/password-realm' && body.realm === 'Username-Password-Authentication';
        if (!grant || body.client_id !== client.id || body.client_secret !== client.secret) return Response.json({ error: 'unauthorized_client' }, { status: 401 });
        if (body.username === 'mary@example.com' && body.password === password) return Response.json({ access_token: 'x', id_token: 'y', token_type: 'Bearer' });
        return Response.json({ error: 'invalid_grant', error_description: 'Wrong email or password.' }, { status: 403 });
      },
    });
    try {
      const result = await runSession('docs/migrating.md (no hashes)', [guide('No hashes to export')], {
        env: { AUTH0_TOKEN_URL: `http://127.0.0.1:${auth0.port}/oauth/token`, AUTH0_CLIENT_ID: client.id, AUTH0_CLIENT_SECRET: client.secret },
        after: [
          'until curl -so /dev/null localhost:4000/health; do sleep 0.2; done',
          // Without the hook, the password Gatehouse took over still signs in.
          login('mary@example.com', password),
          `curl -s -H "Authorization: $(cat gatehouse_data/secret)" localhost:4000/metrics | grep -qx 'gatehouse_users_awaiting_password_migration 0'`,
          `! grep -q "${password}" gatehouse.log hook.log`,
          'kill $!',
        ].join('\n'),
      });
      expect({ exitCode: result.exitCode, output: result.exitCode === 0 ? '' : result.output }).toEqual({ exitCode: 0, output: '' });
      expect(result.leftRunning).toEqual([]);
      expect(asked).toEqual(['mary@example.com']);
    } finally {
      auth0.stop(true);
    }
  }, 120_000);
});

/** The webhook receiver of docs/operating.md, run as written beside a server that sends to it. */
describe('the webhook receiver example', () => {
  const operating = readFileSync(join(REPO_ROOT, 'docs/operating.md'), 'utf8');
  const receiver = /```js\n(import \{ Webhook \} from 'standardwebhooks';[\s\S]*?)```/.exec(operating)![1]!;

  async function deliveries(receiverSecret: string, serverSecret: string): Promise<Record<string, number>> {
    const dir = tempDir();
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'receiver.js'), receiver);
    const port = await freePort();
    // Bun.serve without a port listens on $PORT.
    const proc = Bun.spawn([process.execPath, 'receiver.js'], { cwd: dir, env: cleanEnv({ PORT: String(port), GATEHOUSE_WEBHOOK_SECRET: receiverSecret }), stdout: 'ignore', stderr: 'inherit' });
    try {
      while (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).then(() => false, () => true)) await Bun.sleep(50);
      const server = await startServer({ extraArgs: ['--webhook-url', `http://127.0.0.1:${port}/`, '--webhook-secret', serverSecret] });
      expect((await server.request('POST', '/users', { email: 'ada@example.com', password: 'plum orbit kettle quietly' })).status).toBe(200);
      const outcomes: Record<string, number> = {};
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && Object.keys(outcomes).length === 0; await Bun.sleep(100)) {
        const metrics = await (await server.request('GET', '/metrics')).text();
        for (const m of metrics.matchAll(/^gatehouse_webhook_delivery_attempts_total\{outcome="([a-z]+)"\} (\d+)$/gm)) if (Number(m[2]) > 0) outcomes[m[1]!] = Number(m[2]);
      }
      await server.stop();
      return outcomes;
    } finally {
      proc.kill();
      await proc.exited;
    }
  }

  const secret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;

  test('with the same secret, the receiver acknowledges the signed event', async () => {
    const key = secret();
    expect(await deliveries(key, key)).toEqual({ delivered: 1 });
  }, 60_000);

  test('with another secret, it refuses it (the sender retries)', async () => {
    expect(await deliveries(secret(), secret())).toEqual({ retry: 1 });
  }, 60_000);
});

describe('which examples are checked', () => {
  const all = PAGES.flatMap((page) => shellBlocks(page).map((block) => ({ page, ...block })));

  test('the tour, the flows, the CLI, events, metrics, import, export and backup are checked', () => {
    const checked = (page: string, text: string) => all.some((block) => block.page === page && block.notChecked === null && block.code.includes(text));
    expect(checked('README.md', 'npx gatehouse serve > gatehouse.log &')).toBe(true);
    expect(checked('README.md', '/authenticate/password')).toBe(true);
    for (const path of ['/password-reset-requests', '/verify-email', '/verify-new-email', '/register-totp', '/verify-2fa/totp', '/reset-2fa']) {
      expect({ path, checked: checked('docs/integrating.md', path) }).toEqual({ path, checked: true });
    }
    expect(checked('docs/operating.md', '/events?')).toBe(true);
    expect(checked('docs/operating.md', '/metrics')).toBe(true);
    expect(checked('docs/operating.md', 'npx gatehouse backup')).toBe(true);
    expect(checked('docs/migrating.md', 'npx gatehouse import')).toBe(true);
    expect(checked('docs/migrating.md', 'npx gatehouse export')).toBe(true);
  });

  test('every block left unchecked says why', () => {
    for (const block of all.filter((b) => b.notChecked !== null)) expect(block.notChecked!.length).toBeGreaterThan(10);
  });

  test('the blocks checked on sample input are the Firebase and Auth0 guides and the move without hashes', () => {
    const kind = (code: string) => (code.includes('.users[]') ? 'firebase' : code.includes('migrate_password') ? 'no hashes' : code.includes('auth0|') ? 'auth0' : '?');
    expect(all.filter((b) => b.onSamples).map((b) => [b.page, kind(b.code)])).toEqual([
      ['docs/migrating.md', 'no hashes'],
      ['docs/migrating.md', 'firebase'],
      ['docs/migrating.md', 'auth0'],
    ]);
  });

  test('no example calls the command anything but npx gatehouse (or the built ./dist/gatehouse)', () => {
    for (const block of all) {
      const bare = block.code.split('\n').filter((line) => /(^|[\s$(])gatehouse (serve|import|export|backup|generate-secret|--version)/.test(line.replace(/(npx|\.\/dist\/) ?gatehouse /g, '')));
      expect({ page: block.page, line: block.line, bare }).toEqual({ page: block.page, line: block.line, bare: [] });
    }
  });

  test('no page cites the contract file, which is not in the repository', () => {
    for (const page of PAGES) expect({ page, cites: /API\.md|shared\/spec/.test(readFileSync(join(REPO_ROOT, page), 'utf8')) }).toEqual({ page, cites: false });
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the reference tables list what the build has', () => {
  const operating = readFileSync(join(REPO_ROOT, 'docs/operating.md'), 'utf8');
  const integrating = readFileSync(join(REPO_ROOT, 'docs/integrating.md'), 'utf8');

  test('the events table names every event type; one it calls "not written yet" is written nowhere', () => {
    const table = operating.split('\n').filter((line) => /^\| `[a-z_]+\.[a-z_]+`/.test(line));
    const typesOf = (line: string) => [...line.split('|')[1]!.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]!);
    expect(table.flatMap(typesOf).sort()).toEqual([...EVENT_TYPES].sort());
    const sources = sourceFiles(join(REPO_ROOT, 'src')).filter((file) => !file.endsWith('events/model.ts')).map((file) => readFileSync(file, 'utf8'));
    for (const type of table.filter((line) => line.includes('not written yet')).flatMap(typesOf)) {
      expect({ type, writtenIn: sources.filter((text) => text.includes(`'${type}'`)).length }).toEqual({ type, writtenIn: 0 });
    }
    for (const type of ['user.imported', 'password.rehashed']) expect(sources.some((text) => text.includes(`'${type}'`))).toBe(true);
  });

  test('the metrics table lists every rate-limit label', () => {
    const row = operating.split('\n').find((line) => line.startsWith('| `gatehouse_rate_limit_refusals_total`'))!;
    const listed = [...row.split('|')[3]!.matchAll(/`([a-z_0-9]+)`/g)].map((m) => m[1]).filter((name) => name !== 'limit');
    expect(listed.sort()).toEqual(Object.values(LIMIT_NAMES).sort());
  });

  test('the error table gives every error code its status', () => {
    const rows = integrating.split('\n').map((line) => /^\| `([A-Z_]+)` \| (\d{3}) \|/.exec(line)).filter((m) => m !== null);
    expect(Object.fromEntries(rows.map((m) => [m[1], Number(m[2])]))).toEqual({ ...ERROR_STATUS });
  });
});

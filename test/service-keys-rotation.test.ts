// Rotating a service key on several instances (API.md §17, docs/operating.md): two real server
// processes on PostgreSQL and Redis, each with its own copy of the keys file, serve steady traffic
// while a new key is added everywhere, the callers move to it, and the old key is removed. Not one
// request may fail at any step.
import { describe, expect, test } from 'bun:test';
import { closeSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { runToExit, tempDirsOfThisFile } from './support/server-process';
import { twoProcessesForThisFile } from './support/two-processes';
import { waitUntil } from './support/webhook-receiver';

const tempDir = tempDirsOfThisFile();
const dir = tempDir();
const files = [join(dir, 'keys-a'), join(dir, 'keys-b')] as const;

async function keys(...args: string[]): Promise<string> {
  const result = await runToExit(['keys', ...args]);
  if (result.exitCode !== 0) throw new Error(`keys ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}
/** As an operator copies the file to another machine: the new version replaces the old in one rename. */
function copyKeysFile(from: string, to: string): void {
  const temp = `${to}.copy`;
  const fd = openSync(temp, 'w', 0o600);
  writeSync(fd, readFileSync(from));
  closeSync(fd);
  renameSync(temp, to);
}

const oldKey = await keys('add', 'old', '--scope', '*', '--keys-file', files[0]);
copyKeysFile(files[0], files[1]);
const { skip, pair } = await twoProcessesForThisFile('service key rotation on two processes', { credentials: (index) => ['--keys-file', files[index]!] });

describe.skipIf(skip)('rotating a key on two instances under steady traffic (API.md §17)', () => {
  test('add the new key everywhere, move the callers, remove the old key: no request fails', async () => {
    const { servers } = pair();
    const send = (n: number, key: string, method: string, path: string, body?: unknown) =>
      fetch(`${servers[n % 2]!.url}${path}`, { method, headers: { authorization: key }, body: body === undefined ? undefined : JSON.stringify(body) });
    const created = await (await send(0, oldKey, 'POST', '/users', { email: 'rotate@example.com', password: 'rotation test password 1' })).json() as { id: string };
    const requests: [string, string][] = [['GET', `/users/${created.id}`], ['GET', '/users?per_page=5'], ['POST', `/users/${created.id}/clear-lockouts`]];

    let current = oldKey;
    let running = true;
    const failures: string[] = [];
    let answered = 0;
    const worker = async (offset: number) => {
      for (let n = offset; running; n += 7) {
        const [method, path] = requests[n % requests.length]!;
        const key = current;
        try {
          const response = await send(n, key, method, path);
          await response.arrayBuffer();
          if (response.status >= 300) failures.push(`${method} ${path} on ${n % 2} with ${key === oldKey ? 'old' : 'new'}: ${response.status}`);
        } catch (error) {
          failures.push(`${method} ${path}: ${String(error)}`);
        }
        answered++;
      }
    };
    const workers = Array.from({ length: 7 }, (_, offset) => worker(offset));
    const accepted = async (key: string, wanted: number) =>
      (await Promise.all([0, 1].map(async (n) => (await send(n, key, 'GET', '/')).status))).every((status) => status === wanted);
    // Each step goes on only after the traffic has gone on under it: counted, not timed (a loaded machine is slow).
    const steadily = async (requests: number) => {
      const before = answered;
      await waitUntil(() => answered >= before + requests, 60_000, `${requests} more requests`);
    };

    await steadily(40);
    // 1. Add the new key to the file and copy the file to every instance; each reloads within seconds.
    const newKey = await keys('add', 'new', '--scope', '*', '--keys-file', files[0]);
    copyKeysFile(files[0], files[1]);
    await waitUntil(() => accepted(newKey, 200), 10_000, 'the new key on both instances');
    await steadily(40);
    // 2. Move the callers.
    current = newKey;
    await steadily(40);
    // 3. Remove the old key everywhere.
    await keys('remove', 'old', '--keys-file', files[0]);
    copyKeysFile(files[0], files[1]);
    await waitUntil(() => accepted(oldKey, 401), 10_000, 'the old key refused on both instances');
    await steadily(40);
    running = false;
    await Promise.all(workers);

    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThanOrEqual(160);
    // The writes' events say which key made them: both, as the callers moved.
    const actors = await pair().sql`select actor, count(*)::int as n from events where type = 'lockouts.cleared' group by actor order by actor`;
    expect(actors.map((row: { actor: string }) => row.actor)).toEqual(['new', 'old']);
    for (const server of servers) {
      const used = new Set(server.lines.filter((line) => line.status === 200 || line.status === 204).map((line) => line.key));
      expect(used).toEqual(new Set(['old', 'new']));
      expect(JSON.stringify(server.lines) + server.stderr()).not.toContain('ghk_');
    }
  }, 300_000);
});

/**
 * `bun test/bench/read-profile.ts [REQUESTS]`: where the CPU of one GET /users/{id} goes, layer by
 * layer (issue 26). A child process serves 1,000 seeded users exactly as `gatehouse serve` does, and
 * calls its fetch handler in-process (32 requests in flight, as wrk's connections) under
 * `bun --cpu-prof`; its stdout (the access log) is a pipe this process drains, as in the bench. Each
 * profile sample taken during the measured loop is given to the innermost frame a layer claims; a
 * layer's µs per request is its share of those samples times the loop's CPU per request (user +
 * system, which includes the harness's own request building, shown as its own line). Bun's HTTP
 * parsing and socket writes are not in it: they are the same for the floor (test/bench/floor.ts).
 * `PROFILE_TREE=DIR` profiles another checkout's server (a git worktree) with the same harness;
 * `PROFILE_APP=floor` the floor app's handler instead (for its CPU per request; its layers are Elysia's).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { floorApp } from './floor-server';
import { seedUsers } from './seed';

const SECRET = 'bench-secret-0123456789';
const IN_FLIGHT = 32;

interface Window {
  startUs: number;
  endUs: number;
  requests: number;
  cpuUs: number;
}

/** The child: serve, warm up, then the measured loop; writes its window (epoch µs, as the profile's clock) to `out`. */
async function child(dir: string, userId: string, requests: number, out: string): Promise<void> {
  const { fetch, stop } = process.env.PROFILE_APP === 'floor' ? floorHandler(dir) : await gatehouseHandler(dir);
  const url = `http://localhost/users/${userId}`;
  const headers = { authorization: SECRET };
  const loop = async (count: number) => {
    for (let done = 0; done < count; done += IN_FLIGHT) {
      const batch: Promise<Response>[] = [];
      for (let i = 0; i < IN_FLIGHT; i++) batch.push(fetch(new Request(url, { headers })));
      for (const response of await Promise.all(batch)) if (response.status !== 200) throw new Error(`status ${response.status}`);
    }
  };
  await loop(50_000);
  await Bun.sleep(100);
  const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
  const cpu = process.cpuUsage();
  const startUs = nowUs();
  await loop(requests);
  const endUs = nowUs();
  const used = process.cpuUsage(cpu);
  writeFileSync(out, JSON.stringify({ startUs, endUs, requests, cpuUs: used.user + used.system } satisfies Window));
  await stop();
}

/** Gatehouse as `gatehouse serve` builds it; PROFILE_TREE: another checkout's (git worktree), for before and after. */
async function gatehouseHandler(dir: string) {
  await import('reflect-metadata');
  const tree = process.env.PROFILE_TREE ?? join(import.meta.dir, '..', '..');
  const { parseServeConfig } = await import(join(tree, 'src/cli/config.ts'));
  const { serve } = await import(join(tree, 'src/cli/serve.ts'));
  const { server, stop } = await serve(parseServeConfig(['--port', '0', '--dir', dir, '--secret', SECRET, '--pwned-check', 'off'], {}));
  return { fetch: (request: Request) => Promise.resolve(server.fetch(request) as Response | Promise<Response>), stop };
}

/** PROFILE_APP=floor: the floor app's handler (Elysia's own router here; over HTTP the floor uses Bun's). */
function floorHandler(dir: string) {
  const app = floorApp(dir, SECRET);
  return { fetch: (request: Request) => Promise.resolve(app.handle(request)), stop: async () => {} };
}

interface Frame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}

/**
 * Layers by the code that runs: a sample goes to the layer of the innermost JavaScript frame a rule
 * claims. Native leaves go with their caller (JSON.stringify in the log line is the log's), except the
 * SQLite statement and, below Elysia or a route, building the JSON answer.
 */
const LAYERS: [string, (frame: Frame) => boolean][] = [
  ['harness (building the Request, awaiting answers)', (f) => f.url.endsWith('test/bench/read-profile.ts')],
  ['SQLite statement (bun:sqlite)', (f) => f.url.startsWith('bun:sqlite')],
  ['credential digest', (f) => f.functionName === 'isAuthorized'],
  ['Request rebuilding', (f) => f.functionName === 'withRoutableUrl'],
  ['request id', (f) => f.functionName === 'nextRequestId' || f.functionName === 'setRequestId'],
  ['metrics (route template, counters)', (f) => f.url.includes('/src/metrics/') || f.url.endsWith('src/http/route-label.ts')],
  ['log line (build, batch, write)', (f) => f.url.endsWith('src/http/log.ts')],
  ['serialisation (JSON answer)', (f) => f.url.endsWith('src/http/responses.ts')],
  ['headers (nosniff, no-store; added where missing)', (f) => f.url.endsWith('src/http/headers.ts')],
  ['validation (TypeBox)', (f) => f.url.includes('/@sinclair/typebox/')],
  ['path resource lookup (store, Drizzle, view)', (f) => f.url.includes('/drizzle-orm/') || /\/src\/users\/(store|service|model)\.ts$/.test(f.url)],
  ['route handler (users/routes.ts)', (f) => f.url.endsWith('src/users/routes.ts')],
  ['Elysia: routing, context, hooks, response', (f) => f.url.includes('/elysia/') || f.url.includes('/memoirist/') || (f.url === '' && f.functionName === 'handle')],
  ['outer handler (path, size check, order)', (f) => f.url.endsWith('src/http/handler.ts') || f.url.endsWith('src/app.ts')],
];
const SQLITE = LAYERS[1]![0];
const SERIALISATION = LAYERS[7]![0];
const PATH_LOOKUP = LAYERS[10]![0];
/** Layers that own the natives they call; below any other layer, building JSON is the answer's serialisation. */
const OWNS_ITS_NATIVES = new Set(LAYERS.slice(0, 9).map(([name]) => name));
function withNative(native: string | undefined, claimed: string): string {
  if (native === undefined) return claimed;
  if ((native === 'get' || native === 'values') && claimed === PATH_LOOKUP) return SQLITE;
  if ((native === 'json' || native === 'stringify' || native === 'Response') && !OWNS_ITS_NATIVES.has(claimed)) return SERIALISATION;
  return claimed;
}
const OTHER = 'other (event loop, promises, GC)';

function analyse(profileFile: string, window: Window) {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const layerOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = layerOf.get(id);
    if (known !== undefined) return known;
    let layer = OTHER;
    let native: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const frame = nodes.get(at)!.callFrame;
      if (frame.url === '' && frame.functionName !== 'handle') {
        native ??= frame.functionName;
        continue;
      }
      const rule = LAYERS.find(([, claims]) => claims(frame));
      if (rule !== undefined) {
        layer = withNative(native, rule[0]);
        break;
      }
    }
    layerOf.set(id, layer);
    return layer;
  };
  const counts = new Map<string, number>();
  let time = profile.startTime;
  let total = 0;
  profile.samples.forEach((id, index) => {
    time += profile.timeDeltas[index]!;
    if (time < window.startUs || time > window.endUs) return;
    const layer = classify(id);
    counts.set(layer, (counts.get(layer) ?? 0) + 1);
    total++;
  });
  const cpuPerRequest = window.cpuUs / window.requests;
  const rows = [...LAYERS.map(([name]) => name), OTHER].map((name) => ({ name, share: (counts.get(name) ?? 0) / total }));
  return { rows, cpuPerRequest, samples: total };
}

async function main(requests: number) {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-read-profile-'));
  try {
    const hash = await Bun.password.hash('bench password 0123', { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });
    const { sampleIds } = seedUsers(join(dir, 'data'), 1000, hash);
    const out = join(dir, 'window.json');
    const profiles = join(dir, 'profiles');
    const proc = Bun.spawn(
      [process.execPath, '--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${profiles}`, import.meta.path, '--child', join(dir, 'data'), sampleIds[0]!, String(requests), out],
      { stdout: 'pipe', stderr: 'inherit' },
    );
    let lines = 0;
    for await (const chunk of proc.stdout) for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
    if ((await proc.exited) !== 0) throw new Error('profiled child failed');
    const profileFile = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'))!;
    const window = JSON.parse(readFileSync(out, 'utf8')) as Window;
    const { rows, cpuPerRequest, samples } = analyse(join(profiles, profileFile), window);
    const harness = rows.find((row) => row.name.startsWith('harness'))!.share * cpuPerRequest;
    console.log(`${requests.toLocaleString('en')} requests in-process, ${cpuPerRequest.toFixed(1)} CPU µs each (user + system), ${(cpuPerRequest - harness).toFixed(1)} without the harness; ${samples} samples; ${lines.toLocaleString('en')} log lines read`);
    console.log('| Layer | Samples % | CPU µs/request |\n|---|---:|---:|');
    for (const row of rows) console.log(`| ${row.name} | ${(row.share * 100).toFixed(1)} | ${(row.share * cpuPerRequest).toFixed(2)} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args[1]!, args[2]!, Number(args[3]), args[4]!);
else await main(Number(args[0] ?? 300_000));

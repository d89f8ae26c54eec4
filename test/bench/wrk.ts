import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadSettings {
  connections: number;
  threads: number;
  seconds: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx/3xx responses plus socket errors: a scenario with any is not a clean measurement. */
  errors: number;
}

export interface Request {
  url: string;
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** One body a line, each sent once (single-use challenges): thread t of n sends lines t, t+n, ... */
  bodiesFile?: string;
  /** `body` with `%s` replaced by a client_ip no other request used (10.<thread>.x.y), so no address runs out of tokens. */
  uniqueClientIp?: boolean;
  /** Base URLs (`http://host:port`) of several servers: thread t of n talks to server t mod count, as a round-robin balancer would split them. */
  servers?: string[];
  /** One path a line, each requested once (with `servers`, each thread on its server): thread t of n sends lines t, t+n, ... */
  pathsFile?: string;
}

/** Installs wrk from the Debian archive when it is missing and we are allowed to. */
export function ensureWrk(): void {
  if (Bun.which('wrk') !== null) return;
  if (process.getuid?.() !== 0) throw new Error('wrk is not installed: run `apt-get install -y wrk` as root');
  console.error('installing wrk (apt-get install -y wrk)...');
  let install = Bun.spawnSync(['apt-get', 'install', '-y', 'wrk'], { stdout: 'ignore', stderr: 'inherit' });
  if (install.exitCode !== 0) {
    Bun.spawnSync(['apt-get', 'update'], { stdout: 'ignore', stderr: 'inherit' });
    install = Bun.spawnSync(['apt-get', 'install', '-y', 'wrk'], { stdout: 'ignore', stderr: 'inherit' });
  }
  if (install.exitCode !== 0 || Bun.which('wrk') === null) throw new Error('could not install wrk');
}

const scriptDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-wrk-'));
process.once('exit', () => rmSync(scriptDir, { recursive: true, force: true }));
let scripts = 0;

/** wrk sets method, body and headers for every request from a Lua script. */
function luaScript(request: Request, threads: number): string {
  const quote = (value: string) => JSON.stringify(value); // a JSON string is a valid Lua string literal here (ASCII only)
  const lines = [`wrk.method = ${quote(request.method ?? 'GET')}`];
  if (request.body !== undefined) lines.push(`wrk.body = ${quote(request.body)}`);
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`wrk.headers[${quote(name)}] = ${quote(value)}`);
  if (request.bodiesFile !== undefined) lines.push(linesFromFile(request.bodiesFile, threads, [], 'body'));
  if (request.pathsFile !== undefined) lines.push(linesFromFile(request.pathsFile, threads, request.servers ?? [], 'path'));
  else if (request.uniqueClientIp || request.servers !== undefined) lines.push(perThread(request));
  const path = join(scriptDir, `request-${++scripts}.lua`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const luaServers = (servers: string[]) =>
  `{${servers.map((base) => new URL(base)).map((url) => `{${JSON.stringify(url.hostname)}, ${JSON.stringify(url.port)}}`).join(', ')}}`;

/** Per thread: its server (with several, round-robin as a balancer would) and its share number. */
const threadSetup = (servers: string[]) => `
local servers, nextThread = ${luaServers(servers)}, 0
function setup(thread)
  if #servers > 0 then
    local server = servers[(nextThread % #servers) + 1]
    thread.addr = wrk.lookup(server[1], server[2])[1]
  end
  thread:set("share", nextThread)
  nextThread = nextThread + 1
end`;

/** Each thread loads its share of the lines at start and sends each once; once they run out it repeats its last (and the errors show). */
const linesFromFile = (file: string, threads: number, servers: string[], as: 'body' | 'path') => `${threadSetup(servers)}
local lines, sent = {}, 0
function init(args)
  local n = 0
  for line in io.lines(${JSON.stringify(file)}) do
    if n % ${threads} == share then lines[#lines + 1] = line end
    n = n + 1
  end
end
function request()
  sent = sent + 1
  local line = lines[math.min(sent, #lines)]
  return ${as === 'body' ? 'wrk.format(nil, nil, nil, line)' : 'wrk.format(nil, line)'}
end`;

/** Per thread: which server it talks to, and a body with an address of its own for every request. */
function perThread(request: Request): string {
  const body = request.uniqueClientIp ? JSON.stringify(request.body ?? '') : 'nil';
  return `${threadSetup(request.servers ?? [])}
local sent = 0
function request()
  local body = ${body}
  if body == nil then return wrk.format() end
  sent = sent + 1
  local ip = string.format("10.%d.%d.%d", share % 256, math.floor(sent / 256) % 256, sent % 256)
  return wrk.format(nil, nil, nil, string.format(body, ip))
end`;
}

export async function runWrk(request: Request, settings: LoadSettings): Promise<LoadResult> {
  const args = [
    'wrk',
    `--connections=${settings.connections}`,
    `--threads=${settings.threads}`,
    `--duration=${settings.seconds}s`,
    '--timeout=30s',
    '--latency',
    `--script=${luaScript(request, settings.threads)}`,
    request.url,
  ];
  const child = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const [output, errors] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if ((await child.exited) !== 0) throw new Error(`wrk failed: ${errors}${output}`);
  return parseWrkOutput(output);
}

export function parseWrkOutput(output: string): LoadResult {
  const number = (pattern: RegExp) => {
    const match = pattern.exec(output);
    if (match === null) throw new Error(`unexpected wrk output (${pattern}):\n${output}`);
    return match;
  };
  const percentile = (p: number) => {
    const match = number(new RegExp(`^\\s+${p}%\\s+([0-9.]+)(us|ms|s|m)\\s*$`, 'm'));
    return Number(match[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us']!;
  };
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  return {
    requestsPerSecond: Number(number(/^Requests\/sec:\s+([0-9.]+)/m)[1]),
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    requests: Number(number(/^\s+(\d+) requests in/m)[1]),
    errors:
      Number(non2xx?.[1] ?? 0) +
      (socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0)),
  };
}

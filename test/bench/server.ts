import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');
const BUN = process.execPath;

export interface RunningServer {
  pid: number;
  baseUrl: string;
  /** Lines the process wrote to stdout so far (one access-log line per request). */
  lines(): number;
  stop(): Promise<number>;
}

/** Starts a server process and resolves once its `listening` line (with the port) appears on stdout. */
export async function startProcess(command: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const child = Bun.spawn(command, { cwd: ROOT, stdout: 'pipe', stderr: 'inherit', env: { ...process.env, ...env } });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  let lines = 0;
  const port = await new Promise<number>((resolve, reject) => {
    let found = false;
    // Keep draining stdout for the whole run: a full pipe would stall the server's writes.
    // After the listening line only newlines are counted, so the drain costs the shared CPUs little.
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (found) {
          for (let at = value.indexOf(10); at >= 0; at = value.indexOf(10, at + 1)) lines++;
          continue;
        }
        pending += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          lines++;
          if (!found && line.includes('"listening on ')) {
            found = true;
            resolve(JSON.parse(line).port);
          }
        }
      }
      if (!found) reject(new Error(`${command.join(' ')} exited before listening`));
    })();
  });
  return {
    pid: child.pid,
    baseUrl: `http://127.0.0.1:${port}`,
    lines: () => lines,
    stop: async () => {
      child.kill('SIGTERM');
      return child.exited;
    },
  };
}

export function startGatehouse(dir: string, secret: string, extraArgs: string[] = []): Promise<RunningServer> {
  return startProcess([BUN, 'run', 'src/main.ts', 'serve', '--port', '0', '--dir', dir, '--secret', secret, '--pwned-check', 'off', ...extraArgs]);
}

export function startBareServer(): Promise<RunningServer> {
  return startProcess([BUN, 'run', join(import.meta.dir, 'bare-server.ts')]);
}

/** Time from spawning the compiled binary to its first 200 on /health, or null when it is not built. */
export async function measureStartup(binary: string, dir: string): Promise<number | null> {
  if (!(await Bun.file(binary).exists())) return null;
  const started = performance.now();
  const server = await startProcess([binary, 'serve', '--port', '0', '--dir', dir, '--secret', 'startup-secret-0123456789', '--pwned-check', 'off']);
  try {
    for (;;) {
      const status = await fetch(`${server.baseUrl}/health`).then((r) => r.status, () => 0);
      if (status === 200) return performance.now() - started;
      await Bun.sleep(1);
    }
  } finally {
    await server.stop();
  }
}

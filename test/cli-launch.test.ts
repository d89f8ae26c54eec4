import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../package.json';
import { VALUE_FLAGS } from '../src/cli/config';
import { SERVE_FLAGS } from '../src/cli/help';
import { REPO_ROOT, runToExit, startServer, tempDirsOfThisFile } from './support/server-process';

/** How the docs run Gatehouse from a clone: package.json's bin, through npx or directly. */
const BIN = join(REPO_ROOT, 'bin/gatehouse');
const NPX = ['npx', '--no-install', 'gatehouse'];
const tempDir = tempDirsOfThisFile();

describe('the gatehouse command from a clone', () => {
  test('package.json names bin/gatehouse as the gatehouse command', () => {
    expect(pkg.bin).toEqual({ gatehouse: 'bin/gatehouse' });
  });

  test('bin/gatehouse runs from any directory, also through a symlink (as npx links it)', async () => {
    const elsewhere = tempDir();
    symlinkSync(BIN, join(elsewhere, 'gatehouse'));
    for (const command of [[BIN], [join(elsewhere, 'gatehouse')]]) {
      expect(await runToExit(['--version'], { command, cwd: elsewhere })).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: '' });
    }
  });

  test('npx gatehouse works in the clone after npm ci', async () => {
    expect(await runToExit(['--version'], { command: NPX, timeoutMs: 60_000 })).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: '' });
  }, 70_000);
});

/** The processes whose command line holds `marker` (a temporary directory only one server uses). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^[0-9]+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

async function gone(marker: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (processesWith(marker).length === 0) return true;
    await Bun.sleep(50);
  }
  return false;
}

describe('stopping a server started in the background (npx gatehouse serve &, then kill $!)', () => {
  test('SIGTERM to npx (the pid $! holds) stops the server behind npm and its shell, gracefully', async () => {
    const dir = tempDir();
    // npm starts `sh -c 'gatehouse serve ...'`, which runs the server: three processes, and $! is npm's.
    const server = await startServer({ command: NPX, dir, timeoutMs: 60_000 });
    try {
      expect(processesWith(dir).length).toBeGreaterThanOrEqual(2);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      await server.stop('SIGTERM');
      expect(await gone(dir, 5_000)).toBe(true);
      expect(server.lines.some((line) => /^stopped: /.test(String(line.message ?? '')))).toBe(true);
      expect(await fetch(`${server.url}/health`).then(() => 'answered', () => 'refused')).toBe('refused');
    } finally {
      for (const pid of processesWith(dir)) process.kill(pid, 'SIGKILL'); // what a failure left behind
    }
  }, 90_000);

  test('bin/gatehouse execs the server: SIGTERM to its pid stops it with exit code 0', async () => {
    const dir = tempDir();
    const server = await startServer({ command: [BIN], dir });
    expect(processesWith(dir)).toEqual([server.proc.pid]);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});

describe('each command has its own --help: exit 0, its flags and their variables', () => {
  const commands = ['serve', 'import', 'export', 'backup', 'generate-secret'];

  test.each(commands)('%s --help, %s -h and help %s', async (command) => {
    const answers = await Promise.all([
      runToExit([command, '--help'], { command: [BIN] }),
      runToExit([command, '-h'], { command: [BIN] }),
      runToExit(['help', command], { command: [BIN] }),
    ]);
    for (const answer of answers) {
      expect(answer.exitCode).toBe(0);
      expect(answer.stderr).toBe('');
      expect(answer.stdout).toStartWith(`Usage: gatehouse ${command}`);
    }
    expect(answers[1]!.stdout).toBe(answers[0]!.stdout);
    expect(answers[2]!.stdout).toBe(answers[0]!.stdout);
  });

  test('serve --help lists every flag serve takes, with its variable', async () => {
    const { stdout } = await runToExit(['serve', '--help'], { command: [BIN] });
    for (const [flag, variable] of Object.entries(VALUE_FLAGS)) {
      expect({ flag, listed: new RegExp(`--${flag} [A-Z]+ +[^\\n]+\\n +\\(${variable}[,)]`).test(stdout) }).toEqual({ flag, listed: true });
    }
    for (const flag of ['--no-docs', '--no-metrics', '--webauthn-origin URL']) expect(stdout).toContain(flag);
    expect(stdout).toContain('GATEHOUSE_WEBAUTHN_ORIGINS');
  });

  test('import, export and backup --help list --dir and GATEHOUSE_DATA_DIR; import and export --database-url too', async () => {
    for (const command of ['import', 'export', 'backup']) {
      const { stdout } = await runToExit([command, '--help'], { command: [BIN] });
      expect(stdout).toContain('GATEHOUSE_DATA_DIR');
      expect(stdout.includes('GATEHOUSE_DATABASE_URL')).toBe(command !== 'backup');
    }
    expect((await runToExit(['import', '--help'], { command: [BIN] })).stdout).toContain('--on-conflict');
  });

  test('help for a command that does not exist: exit 2', async () => {
    const answer = await runToExit(['help', 'frobnicate'], { command: [BIN] });
    expect(answer.exitCode).toBe(2);
    expect(answer.stderr).toMatch(/^gatehouse: [^\n]+frobnicate[^\n]+\n$/);
  });

  test("the README's configuration table lists exactly serve's flags and variables", () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| (`--[^`]+`)? *\| (`GATEHOUSE_[A-Z_]+`)? *\|/gm)].map((m) => ({
      flag: m[1]?.slice(1, -1) ?? null,
      variable: m[2]?.slice(1, -1) ?? null,
    }));
    const documented = rows.filter((row) => row.variable !== 'GATEHOUSE_WEBHOOK_TIMING_SCALE'); // tests only
    const helped = SERVE_FLAGS.map(({ flag, variable }) => ({ flag, variable: variable ?? null }));
    expect(documented).toEqual(helped);
  });
});

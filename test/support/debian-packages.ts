import { test } from 'bun:test';
import { existsSync } from 'node:fs';
import { UNDER_CI } from './ci';

/** A Debian package and a file it installs, which tells whether it is there already. */
export interface DebianPackage {
  name: string;
  provides: string;
}

export type Availability = { ok: true } | { ok: false; reason: string };

const isRoot = () => process.getuid?.() === 0;
let updated: Promise<boolean> | undefined;

async function run(command: string[]): Promise<{ ok: boolean; output: string }> {
  const proc = Bun.spawn(command, {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { ok: code === 0, output: `${out}\n${err}`.trim() };
}

/**
 * What the tests need from Debian (Chromium, PostgreSQL, Redis, ...): installed with apt-get when
 * missing and this process runs as root, so `bun test` on a fresh machine needs no extra step.
 * Otherwise the reason they are not available, for the suite to report as skipped.
 */
export async function ensureDebianPackages(packages: DebianPackage[]): Promise<Availability> {
  const missing = packages.filter((pkg) => !existsSync(pkg.provides));
  if (missing.length === 0) return { ok: true };
  const names = missing.map((pkg) => pkg.name).join(' ');
  if (!isRoot()) return { ok: false, reason: `${names} not installed, and installing needs root` };
  if (!existsSync('/usr/bin/apt-get')) return { ok: false, reason: `${names} not installed, and there is no apt-get` };
  // One index update per test process, however many suites ask.
  updated ??= run(['apt-get', 'update', '-qq']).then((result) => result.ok);
  await updated;
  const install = await run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing.map((pkg) => pkg.name)]);
  const still = missing.filter((pkg) => !existsSync(pkg.provides));
  if (still.length === 0) return { ok: true };
  const tail = install.output.split('\n').slice(-3).join(' ');
  return { ok: false, reason: `apt-get could not install ${still.map((pkg) => pkg.name).join(' ')}: ${tail}` };
}

/**
 * Says once, where bun's summary shows it, why a suite was skipped. Under CI (test/support/ci.ts) the
 * suite is not skipped quietly: the file gets a failing test naming the reason, so the run fails.
 */
export function reportSkipped(suite: string, availability: Availability): boolean {
  if (availability.ok) return false;
  console.warn(`skipped: ${suite}: ${availability.reason}`);
  if (UNDER_CI) {
    test(`${suite} cannot run under CI`, () => {
      throw new Error(`${suite} cannot run: ${availability.reason} (under CI a suite that cannot run fails the run)`);
    });
  }
  return true;
}

/**
 * `bun run fuzz -- --cases N [--seed S [--path P]]`: the fuzz suite with N requests in all (CI runs
 * 20,000: a fixed seed and a fresh one). --seed replays one seed, --path one case of it.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { cases: { type: 'string' }, seed: { type: 'string' }, path: { type: 'string' } },
  strict: true,
  allowPositionals: false,
});
for (const [name, value] of [['cases', values.cases], ['seed', values.seed]] as const) {
  if (value !== undefined && !/^-?[0-9]+$/.test(value)) throw new Error(`--${name} must be an integer, got '${value}'`);
}
const env: Record<string, string | undefined> = { ...process.env, FUZZ_CASES: values.cases, FUZZ_SEED: values.seed, FUZZ_PATH: values.path };
const proc = Bun.spawn([process.execPath, 'test', join(import.meta.dir)], { env, stdio: ['inherit', 'inherit', 'inherit'] });
process.exit(await proc.exited);

// @peculiar/x509 (under @simplewebauthn/server) needs the Reflect polyfill before it loads; a compiled
// binary loads the server's modules lazily, after the entry point, so the entry point brings it.
import 'reflect-metadata';
import { parseServeConfig, UsageError } from './cli/config';
import { generateSecret } from './security/random';
import { VERSION } from './version';

const USAGE = `gatehouse ${VERSION}: user accounts and credentials over REST

  gatehouse serve [--port 4000] [--host 127.0.0.1] [--dir ./gatehouse_data] [--secret S | --secret-file F]
                  [--pwned-check online|offline|off] [--pwned-api-url URL] [--no-docs]
                  [--database-url postgres://... --redis-url redis://...]
                  [--no-metrics] [--webhook-url URL --webhook-secret whsec_...] [--events-retention-days 90]
                  [--webauthn-rp-id ID [--webauthn-rp-name NAME] [--webauthn-origin URL ...]]
  gatehouse import FILE|- [--dir D | --database-url URL] [--on-conflict fail|skip]
  gatehouse export [FILE|-] [--dir D | --database-url URL]
  gatehouse backup FILE [--dir D]
  gatehouse generate-secret
  gatehouse --version
`;

/** Commands other than serve take no arguments. */
function noArguments(command: string, rest: string[]): void {
  if (rest.length > 0) throw new UsageError(`${command} takes no arguments, got '${rest[0]}'`);
}

/** Start-up failures after the flags parsed (address in use, bad host, unwritable dir, unreachable database) are bad values too. */
async function startServing(args: string[]) {
  const config = parseServeConfig(args, process.env);
  try {
    const { serve } = await import('./cli/serve');
    return await serve(config);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const where = config.databaseUrl === null ? `data in ${config.dir}` : 'the database at --database-url';
    throw new UsageError(`cannot serve on ${config.host}:${config.port} with ${where}: ${message.split('\n')[0]}`);
  }
}

async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (command === 'import' || command === 'export' || command === 'backup') {
    // Loaded only here: the server's modules (Elysia, the API's schemas, metrics) would add about
    // 40 MB to a command whose memory is bounded (README, Benchmarks).
    const { runTransferCommand } = await import('./cli/transfer');
    process.exit(await runTransferCommand(command, rest, process.env));
  }
  if (command !== undefined && command !== 'serve') noArguments(command, rest);
  switch (command) {
    case 'serve': {
      const { stop } = await startServing(rest);
      let stopping = false;
      const shutdown = () => {
        if (stopping) return;
        stopping = true;
        stop().then(() => process.exit(0));
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
      return;
    }
    case 'generate-secret':
      console.log(generateSecret());
      return;
    case '--version':
    case 'version':
      console.log(VERSION);
      return;
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return;
    default:
      throw new UsageError(command === undefined ? 'missing command (serve, import, export, backup, generate-secret, --version)' : `unknown command '${command}'`);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`gatehouse: ${error.message}\n`);
  process.exit(2);
}

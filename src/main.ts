// @peculiar/x509 (under @simplewebauthn/server) needs the Reflect polyfill before it loads; a compiled
// binary loads the server's modules lazily, after the entry point, so the entry point brings it.
import 'reflect-metadata';
import { parseServeConfig, UsageError } from './cli/config';
import { asksForHelp, GENERAL_HELP, helpText, isHelpTopic } from './cli/help';
import { stopWithLauncher } from './cli/launcher';
import { drainStdoutLog } from './http/log';
import { generateSecret } from './security/random';
import { VERSION } from './version';

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
  if (isHelpTopic(command) && asksForHelp(rest)) {
    process.stdout.write(helpText(command));
    return;
  }
  if (command === 'help' && isHelpTopic(rest[0]) && rest.length === 1) {
    process.stdout.write(helpText(rest[0]));
    return;
  }
  if (command === 'import' || command === 'export' || command === 'backup') {
    // Loaded only here: the server's modules (Elysia, the API's schemas, metrics) would add about
    // 40 MB to a command whose memory is bounded (docs/benchmarks.md).
    const { runTransferCommand } = await import('./cli/transfer');
    process.exit(await runTransferCommand(command, rest, process.env));
  }
  if (command === 'keys') {
    // Loaded only here, like the transfer commands: a key is made without the server's modules.
    const { runKeysCommand } = await import('./cli/keys');
    runKeysCommand(rest, process.env);
    return;
  }
  if (command === 'help' && rest.length > 0) throw new UsageError(`no command '${rest[0]}' (see 'gatehouse --help')`);
  if (command !== undefined && command !== 'serve') noArguments(command, rest);
  switch (command) {
    case 'serve': {
      const { stop } = await startServing(rest);
      let stopping = false;
      const shutdown = () => {
        if (stopping) return;
        stopping = true;
        // The access log's last lines may still wait for a slow reader of stdout.
        stop()
          .then(drainStdoutLog)
          .then(() => process.exit(0));
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
      stopWithLauncher(process.env, shutdown);
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
    case '-h':
    case 'help':
      process.stdout.write(GENERAL_HELP);
      return;
    default:
      throw new UsageError(command === undefined ? 'missing command (serve, import, export, backup, keys, generate-secret, --version)' : `unknown command '${command}'`);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`gatehouse: ${error.message}\n`);
  process.exit(2);
}

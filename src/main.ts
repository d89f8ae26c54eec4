import { parseServeConfig, UsageError } from './cli/config';
import { serve } from './cli/serve';
import { generateSecret } from './security/random';
import { VERSION } from './version';

const USAGE = `gatehouse ${VERSION}: user accounts and credentials over REST

  gatehouse serve [--port 4000] [--host 127.0.0.1] [--dir ./gatehouse_data] [--secret S]
                  [--pwned-check online|offline|off] [--pwned-api-url URL] [--no-docs]
  gatehouse generate-secret
  gatehouse --version
`;

function main(args: string[]): void {
  const [command, ...rest] = args;
  switch (command) {
    case 'serve': {
      const { stop } = serve(parseServeConfig(rest, process.env));
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
      throw new UsageError(command === undefined ? 'missing command (serve, generate-secret, --version)' : `unknown command '${command}'`);
  }
}

try {
  main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`gatehouse: ${error.message}\n`);
  process.exit(2);
}

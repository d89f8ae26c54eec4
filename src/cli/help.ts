import { VERSION } from '../version';

/** One flag of a command's help: its value, its environment variable, its default and what it does. */
interface FlagHelp {
  flag: string;
  variable?: string;
  defaultValue?: string;
  meaning: string;
}

const DIR: FlagHelp = { flag: '--dir D', variable: 'GATEHOUSE_DATA_DIR', defaultValue: './gatehouse_data', meaning: "the server's data directory (SQLite)" };
const DATABASE_URL: FlagHelp = { flag: '--database-url URL', variable: 'GATEHOUSE_DATABASE_URL', meaning: 'postgres://user:password@host:5432/db instead of --dir' };
const DATABASE_URL_FILE: FlagHelp = { flag: '--database-url-file F', variable: 'GATEHOUSE_DATABASE_URL_FILE', meaning: 'read the database URL from file F (mode 0600) instead' };

const KEYS_FILE: FlagHelp = {
  flag: '--keys-file F',
  variable: 'GATEHOUSE_KEYS_FILE',
  meaning: "named service keys with scopes (mode 0600; see 'gatehouse keys --help') instead of a secret; reloaded on change and on SIGHUP",
};

export const SERVE_FLAGS: FlagHelp[] = [
  { flag: '--port N', variable: 'GATEHOUSE_PORT', defaultValue: '4000', meaning: 'port to listen on (0 picks a free one)' },
  { flag: '--host H', variable: 'GATEHOUSE_HOST', defaultValue: '127.0.0.1', meaning: 'address to listen on' },
  { ...DIR, meaning: 'data directory (gatehouse.db, secret)' },
  { flag: '--secret S', variable: 'GATEHOUSE_SECRET', defaultValue: 'generated into <dir>/secret', meaning: 'the API credential, at least 16 printable ASCII characters' },
  { flag: '--secret-file F', variable: 'GATEHOUSE_SECRET_FILE', meaning: 'read the secret from file F (mode 0600) instead' },
  KEYS_FILE,
  { flag: '--pwned-check MODE', variable: 'GATEHOUSE_PWNED_CHECK', defaultValue: 'online', meaning: 'online, offline (bundled list only) or off' },
  { flag: '--pwned-api-url URL', variable: 'GATEHOUSE_PWNED_API_URL', defaultValue: 'https://api.pwnedpasswords.com', meaning: 'base URL of the range API' },
  { flag: '--no-docs', meaning: 'turn off the API docs page (/docs)' },
  { ...DATABASE_URL, defaultValue: 'SQLite in --dir', meaning: 'keep everything in PostgreSQL 15+ (needs a configured secret)' },
  DATABASE_URL_FILE,
  { flag: '--redis-url URL', variable: 'GATEHOUSE_REDIS_URL', defaultValue: 'per process', meaning: 'redis://host:6379: rate limits and lockouts shared by every instance' },
  { flag: '--redis-url-file F', variable: 'GATEHOUSE_REDIS_URL_FILE', meaning: 'read the Redis URL from file F (mode 0600) instead' },
  { flag: '--webauthn-rp-id ID', variable: 'GATEHOUSE_WEBAUTHN_RP_ID', defaultValue: 'passkeys off', meaning: 'the domain passkeys are bound to, e.g. example.com' },
  { flag: '--webauthn-rp-name NAME', variable: 'GATEHOUSE_WEBAUTHN_RP_NAME', defaultValue: 'the RP id', meaning: 'the name browsers show when a passkey is created' },
  { flag: '--webauthn-origin URL', variable: 'GATEHOUSE_WEBAUTHN_ORIGINS', defaultValue: 'https://<rp id>', meaning: 'origin of a page that runs the ceremonies; repeat the flag, or commas in the variable' },
  { flag: '--no-metrics', meaning: 'turn off GET /metrics' },
  { flag: '--webhook-url URL', variable: 'GATEHOUSE_WEBHOOK_URL', meaning: 'send every event there, signed (needs --webhook-secret)' },
  { flag: '--webhook-secret S', variable: 'GATEHOUSE_WEBHOOK_SECRET', meaning: 'whsec_ and the base64 of 24 to 64 random bytes' },
  { flag: '--webhook-secret-file F', variable: 'GATEHOUSE_WEBHOOK_SECRET_FILE', meaning: 'read the webhook secret from file F (mode 0600) instead' },
  { flag: '--password-migration-url URL', variable: 'GATEHOUSE_PASSWORD_MIGRATION_URL', meaning: 'ask this hook for passwords of users imported without a hash (https, or http to loopback)' },
  { flag: '--password-migration-secret S', variable: 'GATEHOUSE_PASSWORD_MIGRATION_SECRET', meaning: "signs the hook's requests: whsec_ and the base64 of 24 to 64 random bytes" },
  { flag: '--password-migration-secret-file F', variable: 'GATEHOUSE_PASSWORD_MIGRATION_SECRET_FILE', meaning: 'read the hook secret from file F (mode 0600) instead' },
  { flag: '--events-retention-days N', variable: 'GATEHOUSE_EVENTS_RETENTION_DAYS', defaultValue: '90', meaning: 'events older than this are swept (1 to 36500)' },
];

function flagLines(flags: FlagHelp[]): string {
  return flags
    .map(({ flag, variable, defaultValue, meaning }) => {
      const details = [variable, defaultValue === undefined ? undefined : `default ${defaultValue}`].filter(Boolean).join(', ');
      // A flag too long for the column pushes its meaning along.
      const head = flag.length < 27 ? flag.padEnd(27) : `${flag}  `;
      return `  ${head}${meaning}${details === '' ? '' : `\n  ${''.padEnd(27)}(${details})`}`;
    })
    .join('\n');
}

const COMMANDS = `  gatehouse serve [--port 4000] [--host 127.0.0.1] [--dir ./gatehouse_data] [--secret S | --secret-file F | --keys-file F]
                  [--pwned-check online|offline|off] [--pwned-api-url URL] [--no-docs]
                  [--database-url postgres://... --redis-url redis://...]
                  [--no-metrics] [--webhook-url URL --webhook-secret whsec_...] [--events-retention-days 90]
                  [--password-migration-url URL --password-migration-secret whsec_...]
                  [--webauthn-rp-id ID [--webauthn-rp-name NAME] [--webauthn-origin URL ...]]
  gatehouse import FILE|- [--dir D | --database-url URL] [--on-conflict fail|skip]
  gatehouse export [FILE|-] [--dir D | --database-url URL]
  gatehouse backup FILE [--dir D]
  gatehouse keys add NAME --scope SCOPE | list | remove NAME  [--keys-file F]
  gatehouse generate-secret
  gatehouse --version`;

const exitCodes = (failed: string) => `Exit codes: 0 done, 1 ${failed}, 2 bad arguments, 130 interrupted.`;

export const GENERAL_HELP = `gatehouse ${VERSION}: user accounts and credentials over REST

${COMMANDS}

'gatehouse COMMAND --help' (or 'gatehouse help COMMAND') lists a command's flags and their
environment variables.
`;

/** Each command's own help. */
const HELP = {
  serve: `Usage: gatehouse serve [FLAGS]

Runs the server. A flag beats its environment variable; a value that starts with - is written
--flag=-value. SIGTERM or SIGINT stops it: in-flight requests finish, then it exits 0.

${flagLines(SERVE_FLAGS)}
`,
  import: `Usage: gatehouse import FILE|- [--dir D | --database-url URL] [--on-conflict fail|skip]

Adds users from NDJSON lines (one JSON object a line; - reads standard input). Every line is
checked first; with --on-conflict fail (the default) one bad line means nothing is imported.
Works while servers run on the same database. On SQLite, into a database with no users that
nothing else has open, it loads everything in one transaction and holds the database until done:
start the server afterwards.

${flagLines([DIR, DATABASE_URL, DATABASE_URL_FILE, { flag: '--on-conflict MODE', defaultValue: 'fail', meaning: 'fail: import nothing if a line is bad; skip: import the good lines' }])}

${exitCodes('refused or failed (nothing imported)')}
`,
  export: `Usage: gatehouse export [FILE|-] [--dir D | --database-url URL]

Writes every user as NDJSON lines (- or no FILE: standard output), from one consistent snapshot.

${flagLines([DIR, DATABASE_URL, DATABASE_URL_FILE])}

${exitCodes('failed')}
`,
  backup: `Usage: gatehouse backup FILE [--dir D]

Writes a consistent copy of the SQLite database (mode 0600) while the server runs. For PostgreSQL
use its own tools (pg_dump).

${flagLines([DIR])}

${exitCodes('failed')}
`,
  keys: `Usage: gatehouse keys add NAME --scope SCOPE [--keys-file F]
       gatehouse keys list [--keys-file F]
       gatehouse keys remove NAME [--keys-file F]

Manages the service keys of a keys file (one 'NAME SCOPE sha256:DIGEST' a line, # comments); the
file holds digests, never keys. A running 'gatehouse serve --keys-file F' picks a change up within
2 seconds, or at once on SIGHUP.

  add NAME      makes a key (ghk_ and 32 random bytes, base64url), appends its line and prints the
                key on stdout, once: it is stored nowhere. Creates the file (mode 0600) if missing.
  list          names, scopes and the first 8 digits of each digest.
  remove NAME   deletes the key's line.

NAME is 1 to 64 of a-z, 0-9, _ and -. SCOPE is * (everything), read (every GET operation), or
operationIds joined by commas (as in the API document, e.g. getUser,listUsers,disableUser).

${flagLines([KEYS_FILE, { flag: '--scope SCOPE', meaning: 'what the new key may do (add only)' }])}

Exit codes: 0 done, 2 bad arguments or a keys file that does not parse (nothing changed).
`,
  'generate-secret': `Usage: gatehouse generate-secret

Prints a new random secret (40 characters) for --secret, GATEHOUSE_SECRET or a --secret-file.
`,
};

export type HelpTopic = keyof typeof HELP;

export function isHelpTopic(command: string | undefined): command is HelpTopic {
  return command !== undefined && Object.hasOwn(HELP, command);
}

export function helpText(topic: HelpTopic): string {
  return HELP[topic];
}

/** `--help` or `-h` anywhere among a command's arguments asks for its help. */
export function asksForHelp(args: string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

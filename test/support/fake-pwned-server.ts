/**
 * Local stand-in for the Pwned Passwords range API (GET /range/<5 hex>), so tests never hit the internet.
 * `options` is live: tests may change it after start to simulate outages or recoveries.
 */

export interface FakePwnedOptions {
  /** Passwords reported as breached (with a positive count). */
  breached?: string[];
  /** Wait this long before answering, to exercise client timeouts. */
  delayMs?: number;
  /** Respond with this status instead of 200 (body is empty unless `body` is set). */
  status?: number;
  /** Respond with this exact body instead of the computed range answer. */
  body?: string;
}

export interface FakePwnedRequest {
  /** Path plus query string, exactly as received. */
  path: string;
  addPadding: string | null;
}

export interface FakePwnedServer {
  url: string;
  requests: FakePwnedRequest[];
  options: FakePwnedOptions;
  stop(): void;
}

const PADDING_LINES = 3;

export function sha1Hex(password: string): string {
  return new Bun.CryptoHasher('sha1').update(password).digest('hex').toUpperCase();
}

/** Splits SHA-1(password) the way the range API does: 5-char prefix sent, 35-char suffix matched locally. */
export function pwnedHashParts(password: string): { hash: string; prefix: string; suffix: string } {
  const hash = sha1Hex(password);
  return { hash, prefix: hash.slice(0, 5), suffix: hash.slice(5) };
}

export function startFakePwnedServer(initial: FakePwnedOptions = {}): FakePwnedServer {
  const options: FakePwnedOptions = { ...initial };
  const requests: FakePwnedRequest[] = [];

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      requests.push({ path: url.pathname + url.search, addPadding: request.headers.get('Add-Padding') });
      if (options.delayMs) await Bun.sleep(options.delayMs);
      if (options.status !== undefined && options.status !== 200) {
        return new Response(options.body ?? '', { status: options.status });
      }
      if (options.body !== undefined) return new Response(options.body);
      const match = /^\/range\/([0-9A-F]{5})$/.exec(url.pathname);
      if (!match) return new Response('The hash prefix was not in a valid format', { status: 400 });
      return new Response(rangeBody(match[1]!, options.breached ?? []));
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    options,
    stop: () => void server.stop(true),
  };
}

function rangeBody(prefix: string, breached: string[]): string {
  const lines = breached
    .map((password, index) => ({ parts: pwnedHashParts(password), count: index + 1 }))
    .filter(({ parts }) => parts.prefix === prefix)
    .map(({ parts, count }) => `${parts.suffix}:${count}`);
  for (let i = 0; i < PADDING_LINES; i++) lines.push(`${randomSuffix()}:0`);
  return lines.join('\r\n');
}

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return Buffer.from(bytes).toString('hex').slice(0, 35).toUpperCase();
}

import { RedisClient } from 'bun';

/** Redis could not answer this call in time: the caller uses its per-process fallback. */
export class RedisUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RedisUnavailableError';
  }
}

export interface RedisLinkOptions {
  url: string;
  log: (fields: Record<string, unknown>) => void;
  /** A command that takes longer counts as Redis being down; Redis answers in well under a millisecond. */
  commandTimeoutMs?: number;
  /** Opening a connection fails after this long. */
  connectTimeoutMs?: number;
  /** While down, how often to try connecting again. */
  probeIntervalMs?: number;
}

/**
 * One connection to Redis that never makes a caller wait for an outage. Bun's RedisClient, left to
 * itself, queues commands while it reconnects (31 s until it gives up, with the default 20 retries)
 * and then refuses every command until connect() is called again; a hung server leaves commands
 * waiting forever. So: no offline queue, no auto-reconnect, a timer on every command, and on the
 * first failure the connection is dropped and a fresh one is tried every probeIntervalMs. One log
 * line when Redis is lost, one when it is back.
 */
export class RedisLink {
  private client: RedisClient | undefined;
  private probing: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private lost = false;
  /** Redis is back and the return listeners run: commands go out, but callers keep to their own limits. */
  private returning = false;
  private readonly returnListeners: (() => Promise<void>)[] = [];
  private readonly commandTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly probeIntervalMs: number;

  constructor(private readonly options: RedisLinkOptions) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? 250;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 500;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
  }

  /** Connects; when Redis is unreachable the link starts down (and says so) and keeps trying. */
  async start(): Promise<void> {
    if (!(await this.tryConnect())) this.markDown(new RedisUnavailableError('cannot connect'));
  }

  get available(): boolean {
    return this.client !== undefined && !this.returning;
  }

  /**
   * Runs `listener` each time Redis is reachable again after an outage, before the link counts as
   * available, so state kept in the process meanwhile reaches Redis before anyone asks Redis for it.
   */
  onReturn(listener: () => Promise<void>): void {
    this.returnListeners.push(listener);
  }

  /** Sends one command, or throws RedisUnavailableError at once when down or when it fails or times out. */
  async send(command: string, args: string[]): Promise<unknown> {
    const client = this.client;
    if (client === undefined) throw new RedisUnavailableError('Redis is unavailable');
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reply = client.send(command, args);
    reply.catch(() => undefined);
    try {
      return await Promise.race([
        reply,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new RedisUnavailableError(`no answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs);
        }),
      ]);
    } catch (error) {
      if (isNoScript(error)) throw error;
      if (this.client === client) this.markDown(error);
      throw error instanceof RedisUnavailableError ? error : new RedisUnavailableError('Redis command failed', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probing);
    const client = this.client;
    this.client = undefined;
    client?.close();
  }

  private markDown(error: unknown): void {
    const client = this.client;
    this.client = undefined;
    // Closing rejects whatever still waits on a hung connection.
    client?.close();
    if (!this.lost) {
      this.lost = true;
      const reason = error instanceof Error ? ((error.cause as { code?: string } | undefined)?.code ?? (error as { code?: string }).code ?? error.message) : String(error);
      this.options.log({ level: 'warn', message: 'Redis is unreachable: limits are per process until it is back', reason });
    }
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed || this.probing !== undefined) return;
    this.probing = setTimeout(async () => {
      this.probing = undefined;
      if (await this.tryConnect()) {
        if (this.lost && !(await this.runReturnListeners())) return; // lost again meanwhile: probing again
        if (this.lost) this.options.log({ level: 'info', message: 'Redis is reachable again: limits are shared again' });
        this.lost = false;
      } else {
        this.scheduleProbe();
      }
    }, this.probeIntervalMs);
    // A link waiting for Redis must not keep a finished process alive.
    this.probing.unref?.();
  }

  /** Answers whether the link is still up afterwards. A listener's failure is logged, never thrown. */
  private async runReturnListeners(): Promise<boolean> {
    this.returning = true;
    try {
      await Promise.all(this.returnListeners.map((listener) => listener()));
    } catch (error) {
      this.options.log({ level: 'warn', message: 'Redis is back, but writing this process\'s limits to it failed', reason: error instanceof Error ? error.message : String(error) });
    } finally {
      this.returning = false;
    }
    return this.client !== undefined;
  }

  /** A fresh client that answered PING, installed as the link's connection. */
  private async tryConnect(): Promise<boolean> {
    const client = new RedisClient(this.options.url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: this.connectTimeoutMs });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const ping = client.connect().then(() => client.send('PING', []));
      ping.catch(() => undefined);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), this.connectTimeoutMs + this.commandTimeoutMs);
      });
      await Promise.race([ping, timeout]);
    } catch {
      client.close();
      return false;
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      client.close();
      return false;
    }
    // A connection that drops between commands is noticed here rather than by the next caller.
    client.onclose = () => {
      if (this.client === client) this.markDown(new RedisUnavailableError('connection closed'));
    };
    this.client = client;
    return true;
  }
}

const isNoScript = (error: unknown): boolean => error instanceof Error && /^NOSCRIPT/.test(error.message);

/** A Lua script run by its SHA-1, sent in full only when Redis does not have it (first use, after a restart). */
export class RedisScript {
  private readonly sha: string;
  constructor(private readonly source: string) {
    this.sha = new Bun.CryptoHasher('sha1').update(source).digest('hex');
  }

  async run(link: RedisLink, keys: string[], args: (string | number)[]): Promise<unknown> {
    const rest = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return await link.send('EVALSHA', [this.sha, ...rest]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return link.send('EVAL', [this.source, ...rest]);
    }
  }
}

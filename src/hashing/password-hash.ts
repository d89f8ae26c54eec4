import { AppError } from '../errors';
import { parsePasswordHash, verifyParsedHash } from './formats';

const ARGON2_OPTIONS = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const;

export interface HashingLimits {
  /** Hashes computed at once; each holds 19 MiB while it runs. */
  concurrency: number;
  /** Hashes waiting for a slot; beyond this a request gets 503 SERVER_BUSY. */
  maxQueue: number;
}

/** What the metrics read from the hasher at scrape time. */
export interface HashingStats {
  /** Hashes computing now. */
  readonly inFlight: number;
  /** Hashes waiting for a slot. */
  readonly queued: number;
  /** Hashes refused with SERVER_BUSY since start. */
  readonly refusals: number;
}

/**
 * Bounded concurrency and a bounded queue, so that a flood of password requests
 * cannot hold an unbounded number of 19 MiB argon2 buffers in memory.
 */
export class PasswordHasher implements HashingStats {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private refused = 0;

  constructor(private readonly limits: HashingLimits) {}

  get inFlight(): number {
    return this.running;
  }
  get queued(): number {
    return this.waiting.length;
  }
  get refusals(): number {
    return this.refused;
  }

  hash(password: string): Promise<string> {
    return this.withSlot(() => Bun.password.hash(password, ARGON2_OPTIONS));
  }

  /**
   * Checks a password against a stored hash in any format Gatehouse reads (its own argon2id or an
   * imported one, API.md §11), with the parameters stored in the hash. An unknown or corrupt format
   * is a mismatch, never an error; only a full queue refuses (SERVER_BUSY).
   */
  verify(password: string, storedHash: string): Promise<boolean> {
    return this.withSlot(async () => {
      const parsed = parsePasswordHash(storedHash);
      if (parsed === undefined) return false;
      try {
        return await verifyParsedHash(parsed, password);
      } catch {
        return false;
      }
    });
  }

  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.maxQueue) {
        this.refused++;
        throw new AppError('SERVER_BUSY', 1);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // hand the slot over directly
      else this.running--;
    }
  }
}

/** A hash of a random string, verified against when the user is unknown so both paths cost the same. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= Bun.password.hash(crypto.randomUUID(), ARGON2_OPTIONS);
  return dummyHash;
}

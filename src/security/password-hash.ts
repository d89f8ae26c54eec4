import { AppError } from '../errors';

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

  /** Uses the parameters stored in the hash, so older hashes keep verifying. */
  verify(password: string, hash: string): Promise<boolean> {
    return this.withSlot(async () => {
      try {
        return await Bun.password.verify(password, hash);
      } catch {
        return false; // an unknown or corrupt hash format is a mismatch, not a crash
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

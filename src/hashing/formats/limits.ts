/**
 * Bounds on imported hash parameters, so one hostile line cannot make a single verification take
 * much more than a second or hold much more than 64 MiB (128 MiB for argon2, whose common defaults,
 * Django's 100 MiB and Kratos's 128 MiB, would otherwise turn away whole imports). Times measured with Bun 1.4.5 on the
 * 2-core development machine (see the test file, and docs/migrating.md for the limits).
 */
export const LIMITS = {
  /** Cost 13: 0.57 s, cost 14: 1.13 s. */
  bcryptMaxCost: 14,
  /** KiB. 64 MiB, t=3: 0.22 s; Django's m=102400, t=2: 0.2–0.3 s. Time grows with m·t. */
  argon2MaxMemoryKiB: 131_072,
  /**
   * m·t in KiB passes, plus ARGON2_LANE_PASS_KIB for every pass of every lane when there are two or
   * more lanes: 786,432 ≈ 1 s (64 MiB at t=12, p=1: 1.0–1.2 s of CPU). See argon2Work.
   */
  argon2MaxWork: 786_432,
  argon2MaxParallelism: 16,
  /**
   * Passes. No published default goes past 10; at p=1 and the least memory 4,096 passes take 80 ms.
   * (Bun refuses some hashes with tens of thousands of passes outright, as WeakParameters.)
   */
  argon2MaxIterations: 4_096,
  /** Memory is 128·N·r bytes: 64 MiB at N=2^16, r=8. */
  scryptMaxMemoryBytes: 64 * 1024 * 1024,
  /** N·r·p: 2^21 = N 2^16, r 8, p 4 ≈ 0.7 s. */
  scryptMaxWork: 2 ** 21,
  /** Iterations × output blocks. 2,000,000: SHA-1 0.5 s, SHA-256 0.26 s, SHA-512 1.1 s. */
  pbkdf2MaxWork: 2_000_000,
  /**
   * Rounds of a hash loop run in JS slices (phpass, crypt(3), Symfony): 1–1.6 µs each, so
   * passlib's sha512-crypt default (656,000) takes 1.0 s and phpass up to 2^19 rounds 0.6 s.
   */
  loopMaxSteps: 700_000,
} as const;

/**
 * With two or more lanes each pass of each lane costs about 0.2 ms beyond its memory work, whatever
 * p is (the lanes are synchronised four times a pass), which dwarfs the memory work at small m:
 * `m=16,t=49152,p=2` (m·t within the bound) took 9 to 18 s, `m=16,t=4096,p=2` 1.0 s, `m=64,t=1024,p=8`
 * 0.8 s, while `m=16,t=4096,p=1` took 80 ms (Bun 1.4.5, 2 shared cores, 2026-11-26). Each lane pass
 * is counted as 192 KiB passes, so 4,096 of them are the whole 1 s budget on their own. The largest
 * accepted hashes of each shape (test/password-formats.test.ts) took 0.3 to 1.1 s of CPU to check.
 */
export const ARGON2_LANE_PASS_KIB = 192;

/** What one check of an argon2 hash costs, in the KiB passes of LIMITS.argon2MaxWork. */
export function argon2Work(memoryKiB: number, iterations: number, parallelism: number): number {
  const lanePasses = parallelism > 1 ? iterations * parallelism : 0;
  return memoryKiB * iterations + ARGON2_LANE_PASS_KIB * lanePasses;
}

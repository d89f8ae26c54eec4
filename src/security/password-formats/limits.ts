/**
 * Bounds on imported hash parameters, so one hostile line cannot make a single verification take
 * much more than a second or hold much more than 64 MiB (128 MiB for argon2, whose common defaults,
 * Django's 100 MiB and Kratos's 128 MiB, would otherwise turn away whole imports). Times measured with Bun 1.4.5 on the
 * 2-core development machine (see the test file and the README for the table).
 */
export const LIMITS = {
  /** Cost 13: 0.57 s, cost 14: 1.13 s. */
  bcryptMaxCost: 14,
  /** KiB. 64 MiB, t=3: 0.22 s; Django's m=102400, t=2: 0.2–0.3 s. Time grows with m·t. */
  argon2MaxMemoryKiB: 131_072,
  /** m·t in KiB passes: 786,432 ≈ 1 s (64 MiB at t=12). */
  argon2MaxWork: 786_432,
  argon2MaxParallelism: 16,
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

/** Gatehouse's argon2id parameters (API.md §7). */
export const ARGON2 = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const;

/**
 * The hashing ceiling: as many concurrent Bun.password.verify calls as the load has connections,
 * in this process, for a fixed time: verifies per second, and how many ran.
 */
export async function hashingCeiling(concurrency: number, seconds: number): Promise<{ perSecond: number; verifies: number }> {
  const password = 'bench password 0123';
  const hash = await Bun.password.hash(password, ARGON2);
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      if (!(await Bun.password.verify(password, hash))) throw new Error('ceiling verify failed');
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { perSecond: done / ((performance.now() - started) / 1000), verifies: done };
}

/**
 * A JS hash loop checked in slices (issue 24 moved this from the tests): a phpass hash of 2^17 MD5
 * rounds, verified `times` times, with a timer ticking meanwhile. Reports how long each check takes
 * (the work is really done: a check that returned at once would be broken) and the longest the event
 * loop was held between two ticks (a slice, about 1 ms; an unsliced loop holds it for the whole check).
 */
export async function slicedHashLoop(times = 5): Promise<{ checkMs: number; longestGapMs: number }> {
  const { parsePasswordHash, verifyParsedHash } = await import('../../src/hashing/formats');
  const { PASSWORD, SLOW_PHPASS } = await import('../password-formats.vectors');
  const parsed = parsePasswordHash(SLOW_PHPASS)!;
  let last = performance.now();
  let longestGapMs = 0;
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    if (ticking) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const started = performance.now();
  for (let i = 0; i < times; i++) if (!(await verifyParsedHash(parsed, PASSWORD))) throw new Error('phpass check failed');
  const checkMs = (performance.now() - started) / times;
  ticking = false;
  longestGapMs = Math.max(longestGapMs, performance.now() - last);
  return { checkMs, longestGapMs };
}

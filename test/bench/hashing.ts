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

/** About how long one slice of a JS hashing loop may hold the event loop. */
const SLICE_MS = 1;
/** Steps between clock reads; one step is a single MD5/SHA call, well under 2 µs. */
const STEPS_PER_CHECK = 64;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `steps` iterations of a hash loop that has no native one-call form (phpass, crypt(3),
 * Symfony's digest loop) in slices of about a millisecond, so requests keep being served while
 * a WordPress hash (8,192 MD5 calls) or a sha512-crypt hash (hundreds of thousands) is checked.
 */
export async function runInSlices(steps: number, step: (index: number) => void): Promise<void> {
  let index = 0;
  while (index < steps) {
    const sliceEnd = performance.now() + SLICE_MS;
    do {
      const stop = Math.min(steps, index + STEPS_PER_CHECK);
      for (; index < stop; index++) step(index);
    } while (index < steps && performance.now() < sliceEnd);
    if (index < steps) await yieldToEventLoop();
  }
}

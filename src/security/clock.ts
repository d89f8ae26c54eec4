/** Milliseconds since the Unix epoch. Injected everywhere so tests control time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000);

export const nowSeconds = (clock: Clock): number => toUnixSeconds(clock());

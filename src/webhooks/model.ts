import { type StoredEvent, toEventView } from '../events/model';

/** Where events go and the key they are signed with (from `--webhook-secret`). */
export interface WebhookTarget {
  url: string;
  key: Uint8Array;
}

export interface DeliveryTimings {
  /** The wait after the first failed attempt; each further failure doubles it (± 20 % jitter). */
  retryBaseMs: number;
  /** The longest wait between two attempts. */
  retryMaxMs: number;
  /** Measured from the event's time: an attempt failing after this marks the delivery failed. */
  retryWindowMs: number;
  /** One attempt, from connecting to the response status. */
  attemptTimeoutMs: number;
  /** How often an idle sender looks for due rows (new events of this process wake it at once). */
  idlePollMs: number;
}

const HOUR_MS = 60 * 60 * 1000;

/** About 30 attempts in the 24 hours of API.md §12: 5 s, 10 s, 20 s, ... then hourly. */
export const DEFAULT_DELIVERY_TIMINGS: DeliveryTimings = {
  retryBaseMs: 5_000,
  retryMaxMs: HOUR_MS,
  retryWindowMs: 24 * HOUR_MS,
  attemptTimeoutMs: 10_000,
  idlePollMs: 1_000,
};

/** Every delay multiplied by `scale` (GATEHOUSE_WEBHOOK_TIMING_SCALE), so tests of retries and crashes run in seconds. */
export const scaledTimings = (scale: number, base = DEFAULT_DELIVERY_TIMINGS): DeliveryTimings => ({
  retryBaseMs: base.retryBaseMs * scale,
  retryMaxMs: base.retryMaxMs * scale,
  retryWindowMs: base.retryWindowMs * scale,
  attemptTimeoutMs: base.attemptTimeoutMs * scale,
  idlePollMs: base.idlePollMs * scale,
});

/** A claim outlives its attempt's timeout, so a live sender never loses a row it is still sending. */
export const leaseMs = (timings: DeliveryTimings): number => timings.attemptTimeoutMs * 1.5 + 1_000;

/** The wait before the next attempt after `attempts` failed ones. */
export function retryDelayMs(attempts: number, timings: DeliveryTimings, random = Math.random): number {
  const exponential = timings.retryBaseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(timings.retryMaxMs, exponential) * (0.8 + 0.4 * random());
}

/** The body: the event exactly as GET /events lists it. */
export const webhookBody = (event: StoredEvent): string => JSON.stringify(toEventView(event));

/** What an attempt came to, kept until the sender writes the batch back. */
export type AttemptResult =
  | { eventId: number; outcome: 'delivered' }
  | { eventId: number; outcome: 'retry'; nextAttemptAtMs: number }
  | { eventId: number; outcome: 'failed' };

/**
 * What an attempt leads to: delivered on a 2xx (`failure` undefined); else another attempt after the
 * backoff, or failed once the retry window since the event has passed. An attempt cut off by the
 * sender's own stop ('stopped') is handed back at once, for the next sender.
 */
export function resultOf(event: StoredEvent, attempts: number, failure: string | undefined, nowMs: number, timings: DeliveryTimings): AttemptResult {
  if (failure === undefined) return { eventId: event.id, outcome: 'delivered' };
  if (failure === 'stopped') return { eventId: event.id, outcome: 'retry', nextAttemptAtMs: nowMs };
  if (nowMs >= event.time * 1000 + timings.retryWindowMs) return { eventId: event.id, outcome: 'failed' };
  return { eventId: event.id, outcome: 'retry', nextAttemptAtMs: nowMs + retryDelayMs(attempts, timings) };
}

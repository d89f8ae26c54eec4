import { describeError, type Logger } from '../http/log';
import type { DeliveryOutcome } from '../metrics/model';
import type { Clock } from '../security/clock';
import { generateId } from '../security/random';
import { signedJsonPost } from '../security/webhook-signature';
import {
  type AttemptResult,
  DEFAULT_DELIVERY_TIMINGS,
  type DeliveryTimings,
  leaseMs,
  resultOf,
  type WebhookTarget,
  webhookBody,
} from './model';
import type { ClaimedDelivery, WebhookStore } from './store';

/** The most of a receiver's answer that is read; its status is what counts. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Reads the answer to its end (under the attempt's timeout), so the connection can carry the next
 * attempt; past MAX_ANSWER_BYTES it stops and drops the connection, so a receiver cannot make the
 * sender read (or hold) an endless answer.
 */
async function readAnswer(response: Response, controller: AbortController): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    read += value.byteLength;
    if (read > MAX_ANSWER_BYTES) {
      await reader.cancel();
      controller.abort();
      return;
    }
  }
}

export interface WebhookSenderDeps {
  store: WebhookStore;
  target: WebhookTarget;
  clock: Clock;
  log: Logger;
  timings?: DeliveryTimings;
  /** Attempts in flight at once. */
  concurrency?: number;
  fetch?: typeof fetch;
  /** Told the outcome of every attempt (for the metrics). */
  onAttempt?: (outcome: DeliveryOutcome) => void;
}

export interface WebhookSender {
  /** New outbox rows were written: look for them now rather than at the next poll. */
  wake(): void;
  /** Stops claiming, aborts the attempts in flight and gives their rows back for the next sender. */
  stop(): Promise<void>;
}

/**
 * Sends the outbox at least once (API.md §12): claims due rows under a lease, POSTs each signed
 * event, and writes the outcomes back in batches (one transaction for many attempts). A row leaves
 * the outbox only after a 2xx, so a crash or a restart resends what was not acknowledged.
 */
export function startWebhookSender(deps: WebhookSenderDeps): WebhookSender {
  const timings = deps.timings ?? DEFAULT_DELIVERY_TIMINGS;
  const concurrency = deps.concurrency ?? 64;
  const send = deps.fetch ?? fetch;
  // Each start claims under its own token, so rows a crashed process leased wait only for their lease.
  const token = generateId();
  const results: AttemptResult[] = [];
  const inFlight = new Map<number, AbortController>();
  let stopped = false;
  let lastFailure = '';
  // Something may be due: set by wake() and by a claim that filled every free slot; besides, the
  // sender looks every idlePollMs (retries come due, other instances write rows).
  let mayHaveDue = true;
  let pollAt = 0;
  // A nudge that comes while the loop is busy is kept for its next turn, never lost.
  let nudged = false;
  let poke: (() => void) | undefined;
  const nudge = () => {
    nudged = true;
    poke?.();
  };

  const attempt = async ({ event, webhookId: id, attempts }: ClaimedDelivery): Promise<void> => {
    const controller = new AbortController();
    inFlight.set(event.id, controller);
    const timer = setTimeout(() => controller.abort(), timings.attemptTimeoutMs);
    let failure: string | undefined;
    try {
      const body = webhookBody(event);
      const timestamp = Math.floor(deps.clock() / 1000);
      const response = await send(deps.target.url, signedJsonPost(deps.target.key, id, timestamp, body, controller.signal));
      await readAnswer(response, controller);
      if (response.status < 200 || response.status > 299) failure = `HTTP ${response.status}`;
    } catch {
      // Messages of network errors repeat the URL, which may carry a token of the receiver's.
      failure = controller.signal.aborted ? (stopped ? 'stopped' : 'timeout') : 'network error';
    } finally {
      clearTimeout(timer);
      inFlight.delete(event.id);
    }
    const result = resultOf(event, attempts, failure, deps.clock(), timings);
    results.push(result);
    if (failure !== 'stopped') deps.onAttempt?.(result.outcome);
    if (failure !== undefined && failure !== 'stopped') lastFailure = failure;
    nudge();
  };

  const report = (batch: AttemptResult[]) => {
    const retried = batch.filter((r) => r.outcome === 'retry').length;
    const failed = batch.filter((r) => r.outcome === 'failed').map((r) => r.eventId);
    if (retried > 0 && !stopped) deps.log({ level: 'warn', message: 'webhook deliveries will be retried', count: retried, reason: lastFailure });
    if (failed.length > 0) {
      deps.log({ level: 'error', message: 'webhook deliveries failed for good after the retry window', count: failed.length, event_ids: failed.slice(0, 20) });
    }
  };

  /** Writes back what finished and, when slots are free and something may be due, claims more: one transaction. */
  const turn = async () => {
    const free = stopped ? 0 : concurrency - inFlight.size;
    const polling = performance.now() >= pollAt;
    const limit = free > 0 && (mayHaveDue || polling) ? free : 0;
    if (limit > 0 && polling) pollAt = performance.now() + timings.idlePollMs;
    const batch = results.splice(0);
    const now = deps.clock();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await deps.store.settleAndClaim(token, batch, { nowMs: now, leaseUntilMs: now + leaseMs(timings), limit });
    } catch (error) {
      results.unshift(...batch);
      throw error;
    }
    report(batch);
    if (limit > 0) mayHaveDue = claimed.length === limit;
    for (const delivery of claimed) void attempt(delivery);
  };

  /** Resolves at the next poll, wake() or finished attempt; several of those in one turn count once. */
  const nextTurn = () =>
    new Promise<void>((resolve) => {
      if (nudged) {
        nudged = false;
        setImmediate(resolve);
        return;
      }
      // With every slot busy only a finished attempt can free one; it pokes.
      const busy = inFlight.size >= concurrency;
      const timer = busy ? undefined : setTimeout(() => done(), Math.max(0, pollAt - performance.now()));
      const done = () => {
        clearTimeout(timer);
        poke = undefined;
        nudged = false;
        setImmediate(resolve);
      };
      poke = done;
    });

  const loop = (async () => {
    while (!stopped) {
      try {
        await turn();
      } catch (error) {
        deps.log({ level: 'error', message: 'webhook sender failed; trying again', ...describeError(error) });
      }
      if (!stopped) await nextTurn();
    }
  })();

  return {
    wake() {
      mayHaveDue = true;
      nudge();
    },
    async stop() {
      stopped = true;
      nudge();
      await loop;
      // After the loop: a turn that was claiming when stop began starts its attempts once the claim returns.
      for (const controller of inFlight.values()) controller.abort();
      while (inFlight.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await turn();
    },
  };
}

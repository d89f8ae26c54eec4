import { t } from 'elysia';
import { STANDARD_METHODS } from '../http/methods';

export const TAG = 'Metrics';

export const MetricsText = t.String({
  description: 'The Prometheus text exposition format (version 0.0.4)',
  examples: ['# HELP gatehouse_users Users stored\n# TYPE gatehouse_users gauge\ngatehouse_users 42\n'],
});

/** The route label of requests that reached no route: refused before routing (401, 413) or an unknown path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Any other method is labelled OTHER: a client can send any token as a method, and labels must stay bounded. */
const METHODS = new Set(STANDARD_METHODS);
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'OTHER');

/** From 0.5 ms (a read from SQLite) to 5 s (argon2 behind a long queue). */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the webhook sender reports after each attempt. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';
export const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retry', 'failed'];

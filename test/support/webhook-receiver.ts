import { randomBytes } from 'node:crypto';
import type { Server } from 'bun';
import { Webhook } from 'standardwebhooks';

/** A fresh secret in the form Standard Webhooks (and --webhook-secret) expects. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export interface Delivery {
  /** The webhook-id header. */
  id: string;
  timestamp: string;
  body: string;
  /** What the standardwebhooks package made of it, as a receiver would: the parsed event, or why it refused. */
  verified: { ok: true; payload: unknown } | { ok: false; error: string };
  /** performance.now() when it arrived. */
  at: number;
}

/** How the receiver answers the nth request (0-based) for a webhook-id. */
export type Behaviour = (attempt: number, delivery: Delivery) => Response | Promise<Response>;

const ok: Behaviour = () => new Response(null, { status: 204 });

/**
 * A local receiver that checks every request with the `standardwebhooks` package and records it,
 * whatever it then answers. `port` lets a test bring it back where the sender was told to send.
 */
export function startReceiver(secret: string, options: { port?: number; behaviour?: Behaviour } = {}) {
  const webhook = new Webhook(secret);
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  let behaviour = options.behaviour ?? ok;
  const server: Server<undefined> = Bun.serve({
    port: options.port ?? 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = await request.text();
      const headers = Object.fromEntries(request.headers.entries());
      let verified: Delivery['verified'];
      try {
        verified = { ok: true, payload: webhook.verify(body, headers) };
      } catch (error) {
        verified = { ok: false, error: (error as Error).message };
      }
      const delivery = { id: headers['webhook-id'] ?? '', timestamp: headers['webhook-timestamp'] ?? '', body, verified, at: performance.now() };
      deliveries.push(delivery);
      const n = attempts.get(delivery.id) ?? 0;
      attempts.set(delivery.id, n + 1);
      return behaviour(n, delivery);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/gatehouse`,
    port: server.port!,
    deliveries,
    /** Distinct event ids acknowledged or not, from the bodies. */
    eventIds: () => new Set(deliveries.map((d) => (JSON.parse(d.body) as { id: number }).id)),
    setBehaviour(next: Behaviour) {
      behaviour = next;
    },
    stop: () => server.stop(true),
  };
}
export type Receiver = ReturnType<typeof startReceiver>;

/** Polls until `done` holds, failing after `timeoutMs`. */
export async function waitUntil(done: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

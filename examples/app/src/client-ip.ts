/**
 * The caller's address, passed on to Gatehouse as client_ip so its per-address limits apply to
 * people. Behind a reverse proxy the connection is the proxy's, and the address is in a header the
 * proxy writes. A proxy that appends (nginx `$proxy_add_x_forwarded_for`, HAProxy `forwardfor`) keeps
 * whatever the browser sent in front of it, so only the right end of the list is the proxy's word:
 * the right-most entry that is not one of our own proxies is the caller. The left ones are the
 * browser's to choose, and taking them would let anyone dodge the limits or block someone else.
 */
export interface ClientIpSettings {
  /** The header the proxy writes (e.g. 'x-forwarded-for'); unset, the connection's address is used. */
  header?: string;
  /** Our own proxies' addresses, skipped from the right when there is more than one hop. */
  trustedProxies?: readonly string[];
}

export function clientAddress(headerValue: string | null | undefined, connection: string | undefined, settings: ClientIpSettings): string | undefined {
  if (!settings.header || !headerValue) return connection;
  const entries = headerValue.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const trusted = new Set(settings.trustedProxies ?? []);
  for (let i = entries.length - 1; i >= 0; i--) if (!trusted.has(entries[i]!)) return entries[i];
  // Every hop is one of ours: the left-most is the closest we have to the caller.
  return entries[0] ?? connection;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
export const isLoopback = (address: string | undefined) => address !== undefined && LOOPBACK.test(address);

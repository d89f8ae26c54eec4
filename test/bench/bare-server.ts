// The HTTP ceiling: Bun.serve answering a fixed small JSON body, nothing else. Run as its own process.
const body = JSON.stringify({
  id: 'abcdefghijkmnpqrstuvwxyz',
  created_at: 1767225600,
  email: null,
  email_verified: false,
  registered_totp: false,
});

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
});
process.stdout.write(`${JSON.stringify({ message: `listening on ${server.url.href}`, port: server.port })}\n`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});

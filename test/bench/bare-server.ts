// The HTTP ceiling: Bun.serve answering a fixed small JSON body, nothing else. Run as its own process.
// A POST's body is read first (as bytes, as Gatehouse reads it): the ceiling of an operation that takes a body.
const body = JSON.stringify({
  id: 'abcdefghijkmnpqrstuvwxyz',
  created_at: 1767225600,
  email: null,
  email_verified: false,
  registered_totp: false,
});

const answer = () => new Response(body, { headers: { 'content-type': 'application/json' } });

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: (request) => (request.method === 'POST' ? request.bytes().then(answer) : answer()),
});
process.stdout.write(`${JSON.stringify({ message: `listening on ${server.url.href}`, port: server.port })}\n`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});

// The HTTP ceiling: Bun.serve answering a fixed JSON body, nothing else. Run as its own process.
// The body is the view GET /users/{id} answers for a seeded user, 189 bytes (before 2026-12-04 it was
// the view without the three fields migration 0011 added, 106 bytes: docs/benchmarks.md).
// A POST's body is read first (as bytes, as Gatehouse reads it): the ceiling of an operation that takes a body.
const body = JSON.stringify({
  id: 'ic3zq7ut2hcmhrmthqri5qyi',
  created_at: 1767225600,
  email: 'user0@example.com',
  email_verified: false,
  registered_totp: false,
  passkey_count: 0,
  disabled: false,
  disabled_until: null,
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

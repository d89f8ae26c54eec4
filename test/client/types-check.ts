/**
 * Type tests of @gatehouse/client, compiled by tsc in test/client-types.test.ts (never run): every
 * `@ts-expect-error` line must be an error, so a typo in a code, a field or an operation cannot compile.
 */
import { createGatehouseClient, type ErrorCode } from '../../client/src/index.js';

const gatehouse = createGatehouseClient({ url: 'http://127.0.0.1:8080', secret: 'a secret of 16+ characters' });

export async function checks(): Promise<void> {
  const created = await gatehouse.createUser({ password: 'correct horse battery staple', email: 'ada@example.com' });
  if (created.error === null) {
    const id: string = created.data.id;
    const code: string = created.data.recovery_code;
    void [id, code];
    // @ts-expect-error no such field in a created user
    void created.data.password;
  } else {
    const status: number = created.error.status;
    const retryAfter: number | undefined = created.error.retryAfter;
    void [status, retryAfter];
    if (created.error.code === 'EMAIL_ALREADY_USED') void 0;
    if (created.error.code === 'WEAK_PASSWORD') void 0;
    // @ts-expect-error a typo in a code does not compile
    if (created.error.code === 'EMAIL_ALREADY_USE') void 0;
    // @ts-expect-error createUser never answers INCORRECT_CODE
    if (created.error.code === 'INCORRECT_CODE') void 0;
  }
  await gatehouse.createUser({ password_hash: '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC' });
  // @ts-expect-error one of password and password_hash is required
  await gatehouse.createUser({ email: 'ada@example.com' });
  // @ts-expect-error data may be null until the error is checked
  void created.data.id;

  const codes: ErrorCode<'verifyTotp'>[] = ['NOT_FOUND', 'INVALID_DATA', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE'];
  // @ts-expect-error verifyTotp does not document EMAIL_ALREADY_USED
  const wrong: ErrorCode<'verifyTotp'> = 'EMAIL_ALREADY_USED';
  void [codes, wrong];

  // Path parameters, query parameters and body fields by their documented names.
  await gatehouse.getUser({ id: 'x7gq2m9kd4a8rfe3hn5pjc6w' });
  await gatehouse.verifyUserPassword({ id: 'x7gq2m9kd4a8rfe3hn5pjc6w', password: 'correct horse battery staple', client_ip: '203.0.113.7' });
  await gatehouse.listEvents({ after: 10, limit: 100, type: 'password.incorrect' });
  await gatehouse.listUsers();
  await gatehouse.listUsers({ cursor: 'from X-Pagination-Next-Cursor', per_page: 100 });
  for await (const user of gatehouse.listAllUsers({ sort_by: 'id', email_query: 'example.com', per_page: 500 })) {
    const email: string | null = user.email;
    void email;
  }
  // @ts-expect-error the walk sets the cursor itself
  gatehouse.listAllUsers({ cursor: 'x' });
  await gatehouse.getHealth();
  // @ts-expect-error the path parameter is required
  await gatehouse.getUser({});
  // @ts-expect-error the path parameter is required
  await gatehouse.getUser();
  // @ts-expect-error a body field's name is checked
  await gatehouse.verifyUserPassword({ id: 'x', pasword: 'correct horse battery staple' });
  // @ts-expect-error a field's type is checked
  await gatehouse.verifyUserPassword({ id: 'x', password: 12345678 });
  // @ts-expect-error an unknown event type does not compile
  await gatehouse.listEvents({ type: 'password.wrong' });
  // @ts-expect-error no such operation
  await gatehouse.postUsers({ password: 'correct horse battery staple' });

  const deleted = await gatehouse.deleteUser({ id: 'x7gq2m9kd4a8rfe3hn5pjc6w' });
  if (deleted.error === null) {
    const nothing: null = deleted.data;
    void nothing;
  }
  const metrics = await gatehouse.getMetrics();
  if (metrics.error === null) {
    const text: string = metrics.data;
    void text;
  }
  const events = await gatehouse.listEvents();
  if (events.error === null) for (const event of events.data) void (event.id satisfies number);
}

import { describe, expect, test } from 'bun:test';
import { serverDocument } from '../client/scripts/generate';
import { createGatehouseClient, OPERATIONS, type OperationId } from '../client/src/index';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';

/**
 * A path parameter of '', '.' or '..' would change which resource a request names: URL resolves dot
 * segments, so deletePasskey({id, passkey_id: '..'}) would be DELETE /users/{id}, the user itself. The
 * client refuses such values with a TypeError before anything is sent. The operations come from the
 * server's document, so an operation added later is covered without editing this file.
 */
const document = await serverDocument();
const withPathParams = Object.values(document.paths).flatMap((operations) =>
  Object.values(operations)
    .map((operation) => ({ id: operation.operationId as OperationId, names: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name) }))
    .filter((operation) => operation.names.length > 0),
);
const UNSAFE = ['', '.', '..'];

describe('@gatehouse/client path parameters', () => {
  test('the document has operations with path parameters, and the client knows each of them', () => {
    expect(withPathParams.length).toBeGreaterThan(20);
    for (const { id, names } of withPathParams) expect(OPERATIONS[id].path_params as readonly string[]).toEqual(names);
  });

  for (const { id, names } of withPathParams) {
    test(`${id} refuses '', '.' and '..' in ${names.join(', ')} without sending`, async () => {
      const sent: string[] = [];
      const client = createGatehouseClient({ url: 'http://gatehouse.test', secret: SECRET, retries: 0, fetch: (async (url: string) => {
        sent.push(url);
        return Response.json({ error: 'NOT_FOUND' }, { status: 404 });
      }) as unknown as typeof fetch });
      const method = client[id] as (input: Record<string, unknown>) => Promise<unknown>;
      for (const name of names) {
        for (const value of UNSAFE) {
          const input = Object.fromEntries(names.map((other) => [other, other === name ? value : 'x7gq2m9kd4a8rfe3hn5pjc6w']));
          await expect(method(input)).rejects.toBeInstanceOf(TypeError);
        }
      }
      expect(sent).toEqual([]);
      // A value that only looks like a dot segment once decoded is sent, encoded, as one segment.
      await method(Object.fromEntries(names.map((name) => [name, '%2e%2e'])));
      expect(sent).toHaveLength(1);
      expect(new URL(sent[0]!).pathname.split('/').filter((part) => part === '%252e%252e')).toHaveLength(names.length);
    });
  }

  test("deletePasskey with passkey_id '..' does not delete the user", async () => {
    const h = createHarness();
    const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: ((url: string, init?: RequestInit) => h.handle(new Request(url, init))) as typeof fetch });
    const created = await client.createUser({ email: 'ada@example.com', password: STRONG_PASSWORD });
    if (created.error) throw new Error(created.error.code);
    await expect(client.deletePasskey({ id: created.data.id, passkey_id: '..' })).rejects.toBeInstanceOf(TypeError);
    expect((await client.getUser({ id: created.data.id })).error).toBeNull();
  });
});

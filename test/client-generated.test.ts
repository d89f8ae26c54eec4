import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { generate, GENERATED_DIR } from '../client/scripts/generate';

/**
 * The client's types and operation table are generated from the server's document
 * (`bun run client:generate`); regenerating them from this build must change nothing, so the client
 * cannot drift from the server (API.md §16).
 */
describe('@gatehouse/client generated files', () => {
  test('match what the generator makes from the server document of this build', async () => {
    const fresh = await generate();
    for (const [name, text] of Object.entries(fresh)) {
      const committed = await Bun.file(join(GENERATED_DIR, name)).text();
      // A plain boolean first: a 4,000-line diff is no help; the hint is.
      expect({ file: `client/src/generated/${name}`, upToDate: committed === text, fix: 'run: npx bun run client:generate' }).toEqual({
        file: `client/src/generated/${name}`,
        upToDate: true,
        fix: 'run: npx bun run client:generate',
      });
    }
  }, 60_000);

  test('the generator refuses a document whose operation ids are missing or collide', async () => {
    const operation = (operationId?: string) => ({ operationId, responses: { '204': { description: 'No body' } } });
    const document = (ops: Record<string, ReturnType<typeof operation>>) => ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: ops });
    await expect(generate(document({ '/a': { get: operation() } } as never) as never)).rejects.toThrow('operationId');
    await expect(generate({ ...document({}), paths: { '/a': { get: operation('getA') }, '/b': { get: operation('getA') } } } as never)).rejects.toThrow('repeated');
  });
});

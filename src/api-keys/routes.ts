import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Elysia, t } from 'elysia';
import { AppError } from '../errors';
import type { DirectPost } from '../http/direct-routes';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { jsonResponse, noContent } from '../http/responses';
import type { FindUser } from '../users/service';
import { ApiKey, CreateApiKeyBody, CreatedApiKey, MAX_API_KEYS_PER_USER, TAG, VerifiedApiKey, VerifyApiKeyBody } from './model';
import type { ApiKeysService } from './service';

export function apiKeysRoutes(apiKeys: ApiKeysService, findUser: FindUser) {
  // A hot path: the answer is built here (jsonResponse), skipping Elysia's response check; the view's types hold it to the schema.
  const verify = new Elysia().post('/verify-api-key', async ({ body }) => jsonResponse(await apiKeys.verify(body.key, body.scopes)), {
    body: VerifyApiKeyBody,
    ...documented({
      operationId: 'verifyApiKey',
      summary: 'Verify an API key an end user presented',
      tag: TAG,
      description:
        'Answers the key (without the key itself) and its user. Checks in order: INVALID_DATA (body shape), INVALID_API_KEY ' +
        '(not a key Gatehouse issued: wrong shape, unknown, deleted or a wrong character), API_KEY_EXPIRED, INSUFFICIENT_SCOPE ' +
        '(a requested scope the key lacks), USER_DISABLED. last_used_at is written at most once a minute per key.',
      errors: ['INVALID_DATA', 'INVALID_API_KEY', 'API_KEY_EXPIRED', 'INSUFFICIENT_SCOPE', 'USER_DISABLED'],
      ok: VerifiedApiKey,
    }),
  });

  const forUser = new Elysia()
    .use(pathResource('user', findUser))
    .post(
      '/users/:id/api-keys',
      ({ body, user }) => apiKeys.create(user.id, { name: body.name, scopes: body.scopes, expiresAt: body.expires_at }),
      {
        body: CreateApiKeyBody,
        ...documented({
          operationId: 'createApiKey',
          summary: 'Create an API key for a user',
          tag: TAG,
          description:
            'Answers the key with `key`, which is shown only here: Gatehouse keeps only a hash of it. ' +
            `Checks in order: NOT_FOUND, INVALID_DATA, USER_DISABLED, NOT_ALLOWED (the user holds ${MAX_API_KEYS_PER_USER} keys already).`,
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED'],
          ok: CreatedApiKey,
        }),
      },
    )
    .get('/users/:id/api-keys', ({ user }) => apiKeys.list(user.id), {
      ...documented({
        operationId: 'listApiKeys',
        summary: "List a user's API keys",
        tag: TAG,
        description: 'Oldest first, ties by id; expired keys included (they verify as API_KEY_EXPIRED). Never the keys themselves.',
        errors: ['NOT_FOUND'],
        ok: t.Array(ApiKey),
      }),
    })
    .delete(
      '/users/:id/api-keys',
      async ({ user }) => {
        await apiKeys.deleteAllOf(user.id);
        return noContent();
      },
      documented({ operationId: 'deleteApiKeys', summary: "Delete all of a user's API keys", tag: TAG, description: 'One api_key.deleted event per key.', errors: ['NOT_FOUND'] }),
    );

  const oneKey = new Elysia()
    .use(pathResource('user', findUser))
    .derive({ as: 'scoped' }, async ({ params }) => {
      const { id, key_id: keyId } = params as Record<string, string | undefined>;
      const key = id === undefined || keyId === undefined ? undefined : await apiKeys.find(id, keyId);
      if (key === undefined) throw new AppError('NOT_FOUND');
      return { key };
    })
    .delete(
      '/users/:id/api-keys/:key_id',
      async ({ key }) => {
        await apiKeys.delete(key.userId, key.id);
        return noContent();
      },
      documented({ operationId: 'deleteApiKey', summary: 'Delete an API key', tag: TAG, description: 'It verifies as INVALID_API_KEY from then on.', errors: ['NOT_FOUND'] }),
    );

  return new Elysia().use(verify).use(forUser).use(oneKey);
}

/**
 * POST /verify-api-key for the outer handler, without Elysia (http/direct-routes.ts): a verify should
 * cost about a read by id (API.md §18), and the router and context were most of it. The same
 * schema and service as the route above (test/direct-post.test.ts holds the two to the same
 * answers). It drafts no event, so it needs no actor.
 */
export function verifyApiKeyDirectly(apiKeys: ApiKeysService): DirectPost {
  // The route's schema but for uniqueItems, which TypeBox checks by hashing each item (about 1.2 µs
  // of a verify's 15 in process); scopes are strings once the rest holds, so a Set decides it alike.
  const { scopes } = VerifyApiKeyBody.properties;
  const shape = TypeCompiler.Compile(t.Object({ ...VerifyApiKeyBody.properties, scopes: t.Optional(t.Array(scopes.items, { maxItems: scopes.maxItems })) }));
  const valid = (value: unknown): value is typeof VerifyApiKeyBody.static =>
    shape.Check(value) && (value.scopes === undefined || new Set(value.scopes).size === value.scopes.length);
  return {
    path: '/verify-api-key',
    operationId: 'verifyApiKey',
    answer: (value) => {
      if (!valid(value)) throw new AppError('INVALID_DATA');
      const verified = apiKeys.verify(value.key, value.scopes);
      return verified instanceof Promise ? verified.then(jsonResponse) : jsonResponse(verified);
    },
  };
}

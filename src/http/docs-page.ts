import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' };
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' };
import { VERSION } from '../version';

const ASSETS = '/docs/assets';

/** Swagger UI's files come from the npm package and are embedded, so the page needs no CDN and works in the binary. */
const assets = new Elysia({ name: 'docs-assets' })
  .get(`${ASSETS}/swagger-ui.css`, () => asset(swaggerCss, 'text/css; charset=utf-8'), { detail: { hide: true } })
  .get(`${ASSETS}/swagger-ui-bundle.js`, () => asset(swaggerBundle, 'text/javascript; charset=utf-8'), {
    detail: { hide: true },
  });

const asset = (body: string, type: string) =>
  new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });

const DOCS_TAGS = [
  { name: 'Service', description: 'Name, version and health' },
  { name: 'Users', description: 'Create, list, read and delete users' },
  { name: 'Passwords', description: 'Authenticate, verify and update passwords' },
  { name: 'Password reset', description: 'Reset a forgotten password with an emailed code' },
  { name: 'Email verification', description: "Verify a user's email address" },
  { name: 'Email update', description: "Change a user's email address" },
  { name: 'Two-factor', description: 'TOTP and the recovery code' },
  { name: 'Events', description: 'Security events, oldest first, to read on from the last one seen' },
  { name: 'Metrics', description: 'Prometheus metrics of the running server' },
];

type Operation = { responses?: Record<string, { description?: string; content?: Record<string, unknown> }> };

/** The generator gives a 204 a bogus `content: {type: 'void'}`; a body-less response has no content at all. */
function dropVoidContent(document: { paths?: Record<string, Record<string, Operation>> }) {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        if (response.content && 'type' in response.content) delete response.content;
      }
    }
  }
  return document;
}

/** `GET /docs` (Swagger UI) and `GET /docs/json` (OpenAPI document), both without the credential. */
export function docsPage() {
  return new Elysia({ name: 'docs' })
    .onAfterHandle(({ path, response }) => {
      if (path === '/docs/json') return dropVoidContent(response as Parameters<typeof dropVoidContent>[0]);
    })
    .use(assets)
    .use(
    openapi({
      path: '/docs',
      specPath: '/docs/json',
      provider: 'swagger-ui',
      swagger: {
        cdn: `${ASSETS}/swagger-ui-bundle.js`,
        theme: `${ASSETS}/swagger-ui.css`,
        persistAuthorization: true,
      },
      documentation: {
        info: {
          title: 'Gatehouse API',
          version: VERSION,
          description:
            'User accounts and credentials over REST. Every endpoint except /health and /docs needs the configured secret as the raw `Authorization` header value: press Authorize and paste it. Every error answers a JSON object whose `error` field holds the code listed under each endpoint.',
        },
        tags: DOCS_TAGS,
        components: {
          securitySchemes: {
            secret: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The raw configured secret, no scheme' },
          },
        },
      },
    }),
  );
}

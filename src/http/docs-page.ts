import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' };
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' };
import { VERSION } from '../version';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './conventions';
import { finishDocument } from './openapi-document';
import { DOCS_ASSETS, DOCS_PAGE, DOCS_PAGE_HEADERS, DOCS_START_SCRIPT } from './docs-html';

/** Swagger UI's files come from the npm package and are embedded, so the page needs no CDN and works in the binary. */
const assets = new Elysia({ name: 'docs-assets' })
  .get(`${DOCS_ASSETS}/swagger-ui.css`, () => asset(swaggerCss, 'text/css; charset=utf-8'), { detail: { hide: true } })
  .get(`${DOCS_ASSETS}/swagger-ui-bundle.js`, () => asset(swaggerBundle, 'text/javascript; charset=utf-8'), {
    detail: { hide: true },
  })
  .get(`${DOCS_ASSETS}/start.js`, () => asset(DOCS_START_SCRIPT, 'text/javascript; charset=utf-8'), { detail: { hide: true } });

/** The same bytes for every caller of a version, and no secrets: the one answer that may be cached. */
const asset = (body: string, type: string) =>
  new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });

const page = () => new Response(DOCS_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', ...DOCS_PAGE_HEADERS } });

const DOCS_TAGS = [
  { name: 'Service', description: 'Name, version and health' },
  { name: 'Users', description: 'Create, list, read and delete users' },
  { name: 'Support operations', description: 'Disable and enable users, lift their lockouts and an address\'s limits' },
  { name: 'Passwords', description: 'Authenticate, verify and update passwords' },
  { name: 'Password reset', description: 'Reset a forgotten password with an emailed code' },
  { name: 'Email verification', description: "Verify a user's email address" },
  { name: 'Email update', description: "Change a user's email address" },
  { name: 'Two-factor', description: 'TOTP and the recovery code' },
  { name: 'Email sign-in', description: "Sign in without a password, with a code emailed to the user's address" },
  { name: 'Passkeys', description: 'WebAuthn: register passkeys, log in without a password, or use one as the second factor' },
  { name: 'API keys', description: "Keys your users make for their scripts (personal access tokens): create, list, delete, verify" },
  { name: 'Events', description: 'Security events, oldest first, to read on from the last one seen' },
  { name: 'Metrics', description: 'Prometheus metrics of the running server' },
];

/** `GET /docs` (Swagger UI) and `GET /docs/json` (OpenAPI document), both without the credential. */
export function docsPage() {
  return new Elysia({ name: 'docs' })
    .onAfterHandle(({ path, response }) => {
      if (path === '/docs/json') return finishDocument(response);
    })
    .use(assets)
    .get('/docs', page, { detail: { hide: true } })
    .use(
    openapi({
      path: '/docs',
      specPath: '/docs/json',
      provider: null,
      documentation: {
        // Relative: the document is served by the very Gatehouse it describes, wherever that runs.
        servers: [{ url: '/', description: 'This Gatehouse' }],
        info: {
          title: 'Gatehouse API',
          version: VERSION,
          // The SPDX identifier as well as the name, so tools can tell which licence without reading prose.
          license: { name: 'Apache License 2.0', identifier: 'Apache-2.0' },
          description:
            'User accounts and credentials over REST. Every endpoint except /health and /docs needs the configured secret as the raw `Authorization` header value: press Authorize and paste it. ' +
            'Request bodies are JSON objects, read as JSON whatever the Content-Type says: an empty body is `{}`, unknown fields are ignored, ' +
            `a body over ${MAX_BODY_BYTES / 1024} KiB answers PAYLOAD_TOO_LARGE, and one nested more than ${MAX_BODY_DEPTH} levels deep (the body itself being level 1) answers INVALID_DATA, like text that is not UTF-8 JSON. ` +
            'Every error answers a JSON object whose `error` field holds the code listed under each endpoint.',
        },
        tags: DOCS_TAGS,
        components: {
          securitySchemes: {
            secret: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The raw configured secret or service key, no scheme' },
          },
        },
      },
    }),
  );
}

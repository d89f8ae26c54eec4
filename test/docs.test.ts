import { describe, expect, test } from 'bun:test';
import { createApp } from '../src/app';
import { ERROR_STATUS, type ErrorCode } from '../src/errors';
import { createHarness } from './support/harness';

const h = createHarness();
const document = (await h.call('GET', '/docs/json', { auth: null })).json;

/** Every route the app serves, read from the app itself, minus the docs' own hidden routes. */
const servedRoutes = h.app.routes
  .filter((route) => !route.path.startsWith('/docs'))
  .map((route) => ({ method: route.method.toLowerCase(), path: route.path.replace(/:([^/]+)/g, '{$1}'), hasBody: route.hooks?.body !== undefined }));

describe('OpenAPI document', () => {
  test('is served without the credential', async () => {
    expect((await h.call('GET', '/docs/json', { auth: null })).status).toBe(200);
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info.title).toBe('Gatehouse API');
  });

  test('lists every route the app serves', () => {
    expect(servedRoutes.length).toBeGreaterThan(8);
    for (const route of servedRoutes) {
      expect({ route, documented: Boolean(document.paths[route.path]?.[route.method]) }).toEqual({ route, documented: true });
    }
  });

  test('gives each route a summary, a tag, its security and its error codes with their statuses', () => {
    for (const route of servedRoutes) {
      const operation = document.paths[route.path][route.method];
      expect(typeof operation.summary).toBe('string');
      expect(operation.tags.length).toBe(1);
      const codes: ErrorCode[] = operation['x-error-codes'];
      expect(codes).toContain('UNKNOWN_ERROR');
      if (route.path !== '/health') {
        expect(codes).toContain('NOT_AUTHENTICATED');
        expect(operation.security).toEqual([{ secret: [] }]);
      }
      for (const code of codes) {
        const schema = operation.responses[String(ERROR_STATUS[code])]?.content?.['application/json']?.schema;
        const allowed = schema.properties.error.enum ?? [schema.properties.error.const];
        expect({ route, code, allowed: allowed.includes(code) }).toEqual({ route, code, allowed: true });
      }
      const success = operation.responses['200'] ?? operation.responses['204'];
      expect(success).toBeDefined();
      if (operation.responses['204']) expect(operation.responses['204'].content).toBeUndefined();
      if (route.hasBody) {
        const body = operation.requestBody.content['application/json'].schema;
        expect(body.type).toBe('object');
      }
    }
  });

  test('documents the secret as an Authorization header API key', () => {
    expect(document.components.securitySchemes.secret).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
  });

  test('matches the error codes the app can answer', () => {
    const creation = document.paths['/users'].post['x-error-codes'];
    expect(creation).toEqual(expect.arrayContaining(['INVALID_DATA', 'WEAK_PASSWORD', 'TOO_MANY_REQUESTS', 'EMAIL_ALREADY_USED']));
    expect(document.paths['/users/{id}'].get['x-error-codes']).toContain('NOT_FOUND');
  });
});

describe('docs page', () => {
  test('serves Swagger UI with its assets from Gatehouse itself, no CDN', async () => {
    const page = await h.call('GET', '/docs', { auth: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('SwaggerUIBundle');
    expect(page.text).not.toMatch(/https?:\/\//);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.sort()).toEqual(['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']);
    for (const source of sources) {
      const asset = await h.call('GET', source, { auth: null });
      expect(asset.status).toBe(200);
      expect(asset.text.length).toBeGreaterThan(10_000);
    }
  });

  test('can be switched off', async () => {
    const handle = createApp(h.services, { log: h.platform.log, docs: false });
    const response = await handle.handle(new Request('http://localhost/docs'));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'NOT_FOUND' });
  });
});

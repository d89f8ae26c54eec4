import { describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app';
import { ERROR_STATUS, type ErrorCode } from '../src/errors';
import Ajv2020 from 'ajv/dist/2020';
import { createHarness, STRONG_PASSWORD } from './support/harness';
import { REPO_ROOT } from './support/server-process';

const h = createHarness();
const document = (await h.call('GET', '/docs/json', { auth: null })).json;
/** Bun's toMatchObject writes its asymmetric matchers into the object it checks (Bun 1.4.5): the Ajv tests read this copy. */
const pristine = structuredClone(document);

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

  /** Every operation in the document, whether or not the app's route list names it. */
  const operations = Object.entries<Record<string, { operationId?: unknown }>>(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operationId: operation.operationId })),
  );

  test('gives every operation a unique, hand-chosen operationId in lower camel case (API.md §16)', () => {
    expect(operations.length).toBeGreaterThanOrEqual(servedRoutes.length);
    const malformed = operations.filter(({ operationId }) => typeof operationId !== 'string' || !/^[a-z][a-zA-Z0-9]*$/.test(operationId));
    expect(malformed).toEqual([]);
    const byId = Map.groupBy(operations, ({ operationId }) => operationId as string);
    expect([...byId.values()].filter((same) => same.length > 1)).toEqual([]);
  });

  test('keeps the published operationIds: generated clients name their methods after them', () => {
    const published: Record<string, string> = {
      'GET /': 'getServiceInfo',
      'GET /health': 'getHealth',
      'POST /users': 'createUser',
      'GET /users': 'listUsers',
      'GET /users/{id}': 'getUser',
      'DELETE /users/{id}': 'deleteUser',
      'POST /authenticate/password': 'authenticateWithPassword',
      'POST /users/{id}/verify-password': 'verifyUserPassword',
      'POST /users/{id}/update-password': 'updateUserPassword',
      'POST /users/{id}/register-totp': 'registerTotp',
      'GET /users/{id}/totp-credential': 'getTotpCredential',
      'DELETE /users/{id}/totp-credential': 'deleteTotpCredential',
      'POST /users/{id}/verify-2fa/totp': 'verifyTotp',
      'POST /passkey-authentication-options': 'createPasskeyAuthenticationOptions',
      'POST /authenticate/passkey': 'authenticateWithPasskey',
      'POST /users/{id}/passkey-registration-options': 'createPasskeyRegistrationOptions',
      'POST /users/{id}/passkeys': 'registerPasskey',
      'GET /users/{id}/passkeys': 'listPasskeys',
      'POST /users/{id}/verify-2fa/passkey': 'verifyPasskey',
      'PATCH /users/{id}/passkeys/{passkey_id}': 'renamePasskey',
      'DELETE /users/{id}/passkeys/{passkey_id}': 'deletePasskey',
      'GET /events': 'listEvents',
      'POST /users/{id}/password-reset-requests': 'createPasswordResetRequest',
      'GET /users/{id}/password-reset-requests': 'listPasswordResetRequests',
      'DELETE /users/{id}/password-reset-requests': 'invalidatePasswordResetRequests',
      'GET /password-reset-requests/{id}': 'getPasswordResetRequest',
      'DELETE /password-reset-requests/{id}': 'invalidatePasswordResetRequest',
      'POST /password-reset-requests/{id}/verify-email': 'verifyPasswordResetEmail',
      'POST /reset-password': 'resetPassword',
      'POST /users/{id}/email-verification-request': 'createEmailVerificationRequest',
      'GET /users/{id}/email-verification-request': 'getEmailVerificationRequest',
      'DELETE /users/{id}/email-verification-request': 'deleteEmailVerificationRequest',
      'POST /users/{id}/verify-email': 'verifyEmail',
      'POST /users/{id}/email-update-requests': 'createEmailUpdateRequest',
      'GET /users/{id}/email-update-requests': 'listEmailUpdateRequests',
      'DELETE /users/{id}/email-update-requests': 'deleteEmailUpdateRequests',
      'GET /email-update-requests/{id}': 'getEmailUpdateRequest',
      'DELETE /email-update-requests/{id}': 'deleteEmailUpdateRequest',
      'POST /verify-new-email': 'verifyNewEmail',
      'POST /users/{id}/regenerate-recovery-code': 'regenerateRecoveryCode',
      'POST /users/{id}/reset-2fa': 'resetSecondFactors',
      'POST /email-sign-in-requests': 'createEmailSignInRequest',
      'POST /authenticate/email-code': 'authenticateWithEmailCode',
      'GET /users/{id}/email-sign-in-requests': 'listEmailSignInRequests',
      'DELETE /users/{id}/email-sign-in-requests': 'deleteEmailSignInRequests',
      'GET /metrics': 'getMetrics',
    };
    const now = Object.fromEntries(operations.filter(({ route }) => route in published).map(({ route, operationId }) => [route, operationId]));
    expect(now).toEqual(published);
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
    expect(page.text).toContain('swagger-ui-bundle.js');
    expect((await h.call('GET', '/docs/assets/start.js', { auth: null })).text).toContain('SwaggerUIBundle');
    expect(page.text).not.toMatch(/https?:\/\//);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.sort()).toEqual(['/docs/assets/start.js', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']);
    for (const source of sources) {
      const asset = await h.call('GET', source, { auth: null });
      expect(asset.status).toBe(200);
      expect(asset.text.length).toBeGreaterThan(source.endsWith('start.js') ? 50 : 10_000);
    }
  });

  test('can be switched off', async () => {
    const handle = createApp(h.services, { docs: false });
    const response = await handle.handle(new Request('http://localhost/docs'));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'NOT_FOUND' });
  });
});

describe('OpenAPI document states the real rules (issue 11)', () => {
  const bodyOf = (path: string, method = 'post') => document.paths[path][method].requestBody.content['application/json'].schema;

  test('no private format names or helper keywords are left in it', () => {
    const text = JSON.stringify(document);
    expect(text).not.toContain('gatehouse-');
    expect(text).not.toContain('x-documented-as');
  });

  test('is the same document after routes have served requests (Elysia marks compiled schemas closed)', async () => {
    // Schemas are module-level objects shared by every app of the process; serving a request compiles
    // its validator, which writes additionalProperties: false onto them (found when the full suite
    // ran the fuzz after other files: unknown fields are ignored, so a closed body schema was wrong).
    const served = createHarness();
    await served.call('POST', '/verify-new-email', { body: { request_id: 'x', code: 'ABCDEFGH' } });
    await served.call('PATCH', '/users/abcdefghijkmnpqrstuvwxyz/passkeys/abcdefghijkmnpqrstuvwxyz', { body: { name: 'Laptop' } });
    const again = (await createHarness().call('GET', '/docs/json')).json;
    expect(JSON.stringify(again)).not.toContain('"additionalProperties":false');
    expect(again.paths['/verify-new-email'].post.requestBody).toEqual(document.paths['/verify-new-email'].post.requestBody);
  });

  /** A string states a length, a pattern or its values; a union, each of its branches; other types need nothing more. */
  const isConstrained = (field: Record<string, unknown>): boolean => {
    if (Array.isArray(field.anyOf)) return field.anyOf.every((branch) => isConstrained(branch as Record<string, unknown>));
    if (field.type !== 'string') return true;
    return 'maxLength' in field || 'pattern' in field || 'enum' in field || 'const' in field;
  };

  test('every request body field and parameter has a type, every string field a length or pattern or an explanation', () => {
    for (const route of servedRoutes) {
      const operation = document.paths[route.path][route.method];
      for (const parameter of operation.parameters ?? []) expect({ route, parameter: parameter.name, type: parameter.schema.type }).toEqual({ route, parameter: parameter.name, type: expect.anything() });
      const properties = operation.requestBody?.content?.['application/json']?.schema?.properties ?? {};
      for (const [name, field] of Object.entries<Record<string, unknown>>(properties)) {
        expect({ route, name, type: field.type }).toEqual({ route, name, type: expect.anything() });
        // Ids and keys the server looks up: anything that is not one it issued is INVALID_REQUEST or INVALID_API_KEY, never INVALID_DATA.
        const constrained = isConstrained(field) || name === 'request_id' || (route.path === '/verify-api-key' && name === 'key');
        expect({ route, name, constrained }).toEqual({ route, name, constrained: true });
      }
    }
  });

  test('passwords: 8 to 127 code points', () => {
    for (const [path, field] of [['/users', 'password'], ['/users/{id}/update-password', 'new_password'], ['/users/{id}/update-password', 'password'], ['/reset-password', 'password'], ['/authenticate/password', 'password']] as const) {
      expect(bodyOf(path).properties[field]).toMatchObject({ type: 'string', minLength: 8, maxLength: 127 });
    }
  });

  test('codes, recovery codes, TOTP keys and client_ip state their lengths and patterns', () => {
    expect(bodyOf('/users/{id}/verify-email').properties.code).toMatchObject({ minLength: 8, maxLength: 8, pattern: expect.any(String) });
    expect(bodyOf('/users/{id}/reset-2fa').properties.recovery_code).toMatchObject({ minLength: 16, maxLength: 16, pattern: expect.any(String) });
    expect(bodyOf('/users/{id}/verify-2fa/totp').properties.code).toMatchObject({ minLength: 6, maxLength: 6, pattern: '^[0-9]{6}$' });
    expect(bodyOf('/users/{id}/register-totp').properties.key).toMatchObject({ minLength: 28, maxLength: 28, pattern: expect.any(String) });
    expect(bodyOf('/users').properties.client_ip).toMatchObject({ type: ['string', 'null'], maxLength: 64 });
  });

  test('the email pattern, read with the u flag, agrees with what the API accepts', async () => {
    const email = bodyOf('/users/{id}/email-update-requests').properties.email;
    expect(email).toMatchObject({ type: 'string', maxLength: 255 });
    const pattern = new RegExp(email.pattern, 'u');
    const user = await h.createUser();
    const samples = ['ada@example.com', 'a@b.c', '@.', 'a@b', 'a@b.', 'a@.b', 'a b@c.d', 'a,b@c.d', 'a@b@c.d', 'ünï@exämple.com', 'a\r\n@b.c', 'a\u200b@b.c', 'a<b>@c.d', '"a"@b.c', 'a@b..c', 'x(y)@b.c', 'a@b.c\u2028'];
    for (const sample of samples) {
      const res = await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email: sample } });
      h.advance(15 * 60 * 1000); // past the 3-per-15-minutes limit of update requests
      expect({ sample, documented: pattern.test(sample) }).toEqual({ sample, documented: res.status === 200 });
    }
  });

  test('GET /users parameters: types, allowed values and bounds, while odd values still fall back (never 400)', async () => {
    const parameters = Object.fromEntries(document.paths['/users'].get.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    expect(parameters.sort_by).toMatchObject({ type: 'string', enum: ['created_at', 'id'], default: 'created_at' });
    expect(parameters.sort_order).toMatchObject({ type: 'string', enum: ['ascending', 'descending'], default: 'ascending' });
    expect(parameters.per_page).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 20 });
    expect(parameters.page).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(parameters.email_query).toMatchObject({ type: 'string' });
    const odd = await h.call('GET', '/users?sort_by=ID&sort_order=up&per_page=-1&page=x&page=2&email_query[]=a');
    expect(odd.status).toBe(200);
  });

  test('servers and a licence are stated', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(document.info.license).toEqual({ name: 'Apache License 2.0', identifier: 'Apache-2.0' });
  });

  test('the licence is Apache-2.0 everywhere it is stated: the document, package.json and LICENSE', async () => {
    expect((await Bun.file(join(REPO_ROOT, 'package.json')).json()).license).toBe('Apache-2.0');
    const licence = await Bun.file(join(REPO_ROOT, 'LICENSE')).text();
    expect(licence).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(licence).toContain('END OF TERMS AND CONDITIONS');
  });
});

describe('the document states exactly what the server enforces (API.md §16)', () => {
  // An independent reading: Ajv, JSON Schema draft 2020-12 (OpenAPI 3.1's dialect). The fuzz suite
  // (test/fuzz) holds the server to it over thousands of requests; these are the known corners.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, validateFormats: false });
  const bodySchema = (path: string, method = 'post') => pristine.paths[path][method].requestBody.content['application/json'].schema;
  const accepts = (path: string, body: unknown, method = 'post') => ajv.validate(bodySchema(path, method), body);

  test('every example of a request body or body field is valid against its own schema', () => {
    const checked: string[] = [];
    for (const route of servedRoutes) {
      const schema = pristine.paths[route.path][route.method].requestBody?.content?.['application/json']?.schema;
      if (schema === undefined) continue;
      for (const example of schema.examples ?? []) {
        expect({ route, example, valid: ajv.validate(schema, example) }).toEqual({ route, example, valid: true });
        checked.push(route.path);
      }
      for (const [name, field] of Object.entries<{ examples?: unknown[] }>(schema.properties ?? {})) {
        for (const example of field.examples ?? []) expect({ route, name, example, valid: ajv.validate(field, example) }).toEqual({ route, name, example, valid: true });
      }
    }
    expect(checked).toContain('/users');
  });

  test('POST /users: exactly one of password and password_hash, and its examples are bodies the server takes', async () => {
    expect(accepts('/users', { password: STRONG_PASSWORD })).toBe(true);
    expect(accepts('/users', { password_hash: '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC' })).toBe(true);
    expect(accepts('/users', {})).toBe(false);
    expect(accepts('/users', { password: STRONG_PASSWORD, password_hash: '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC' })).toBe(false);
    expect((await h.call('POST', '/users', { body: {} })).json).toEqual({ error: 'INVALID_DATA' });
    const examples = bodySchema('/users').examples;
    expect(examples.length).toBe(2);
    for (const example of examples) expect((await h.call('POST', '/users', { body: example })).status).toBe(200);
  });

  test('register-totp: key or its alias totp_key', async () => {
    const user = await h.createUser();
    const body = { code: '123456' };
    expect(accepts('/users/{id}/register-totp', body)).toBe(false);
    expect((await h.call('POST', `/users/${user.id}/register-totp`, { body })).json).toEqual({ error: 'INVALID_DATA' });
    expect(accepts('/users/{id}/register-totp', { ...body, key: '0KHD8uS1lod4aVpLPC0eDxEiM0Q=' })).toBe(true);
    expect(accepts('/users/{id}/register-totp', { ...body, totp_key: '0KHD8uS1lod4aVpLPC0eDxEiM0Q=' })).toBe(true);
  });

  test('passkey names refuse control characters, on registration and on rename', () => {
    for (const [path, method] of [['/users/{id}/passkeys', 'post'], ['/users/{id}/passkeys/{passkey_id}', 'patch']] as const) {
      const name = bodySchema(path, method).properties.name;
      expect(ajv.validate(name, 'Work laptop')).toBe(true);
      expect(ajv.validate(name, '🔑'.repeat(64))).toBe(true);
      for (const bad of ['a\u0000b', 'tab\there', 'line\n', '\u007f', '\u0085', '', '🔑'.repeat(65), 'x\ud800']) expect({ bad, valid: ajv.validate(name, bad) }).toEqual({ bad, valid: false });
    }
  });

  test('GET /events: after is at most 2^53-1, which the server takes while 2^53 is INVALID_DATA', async () => {
    const after = pristine.paths['/events'].get.parameters.find((p: { name: string }) => p.name === 'after').schema;
    expect(after).toMatchObject({ type: 'integer', minimum: 0, maximum: 2 ** 53 - 1 });
    expect((await h.call('GET', `/events?after=${2 ** 53 - 1}`)).status).toBe(200);
    expect((await h.call('GET', `/events?after=0000${2 ** 53 - 1}`)).status).toBe(200);
    expect((await h.call('GET', `/events?after=${2 ** 53}`)).json).toEqual({ error: 'INVALID_DATA' });
  });

  test('passwords, client_ip and emails refuse lone surrogates, as the server does', async () => {
    expect(accepts('/users', { password: `${STRONG_PASSWORD}\ud800` })).toBe(false);
    expect(accepts('/users', { password: STRONG_PASSWORD, client_ip: 'a\udc00' })).toBe(false);
    expect(accepts('/users', { password: STRONG_PASSWORD, email: 'a\ud800@example.com' })).toBe(false);
    expect(accepts('/users', { password: STRONG_PASSWORD, email: 'a\u037e@example.com' })).toBe(false);
    expect((await h.call('POST', '/users', { rawBody: `{"password":"${STRONG_PASSWORD}\\ud800"}` })).json).toEqual({ error: 'INVALID_DATA' });
    expect((await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email: 'a\u037e@example.com' } })).json).toEqual({ error: 'INVALID_DATA' });
  });
});

describe('redocly lint', () => {
  test('the served document passes the recommended ruleset with no errors and no warnings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, (await h.call('GET', '/docs/json', { auth: null })).text);
      const proc = Bun.spawn([join(REPO_ROOT, 'node_modules/.bin/redocly'), 'lint', file, '--extends=recommended', '--format=json'], {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const report = JSON.parse(out || '{}');
      expect({ code, totals: report.totals, problems: report.problems, stderr: code === 0 ? '' : err }).toEqual({
        code: 0,
        totals: { errors: 0, warnings: 0, ignored: 0 },
        problems: [],
        stderr: '',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000); // a Node process running Redocly: a few seconds on a busy machine
});

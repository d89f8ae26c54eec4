/**
 * The Swagger UI page, written here rather than by @elysiajs/openapi: its page starts Swagger UI
 * from an inline script, which a Content-Security-Policy allowing only the page's own origin
 * blocks. Ours loads everything, the start-up script included, from /docs/assets.
 */
export const DOCS_ASSETS = '/docs/assets';

export const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Gatehouse API</title>
  <link rel="stylesheet" href="${DOCS_ASSETS}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_ASSETS}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_ASSETS}/start.js"></script>
</body>
</html>
`;

/**
 * The entered secret stays in the page's memory only: with persistAuthorization Swagger UI would
 * keep it in localStorage, readable by anything that later runs on this origin. No validator badge
 * (it would fetch from swagger.io).
 */
export const DOCS_START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/docs/json',
  dom_id: '#swagger-ui',
  persistAuthorization: false,
  validatorUrl: null,
});
`;

/**
 * Only the page's own origin (API.md §9). Images also from data: URLs, which Swagger UI's
 * stylesheet uses for its icons: inline images, not another origin.
 */
export const DOCS_PAGE_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

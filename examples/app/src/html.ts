/** HTML built from template literals: every interpolated value is escaped unless it is already Html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map(render).join('');
  if (part instanceof Html) return part.text;
  return escape(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? render(parts[i]!) : ''), ''));
}

/** Markup a trusted library produced (the QR code's SVG). */
export const trusted = (markup: string) => new Html(markup);

export interface PageOptions {
  title: string;
  csrf: string;
  signedIn: boolean;
  notice?: string;
  error?: string;
  scripts?: string[];
}

export function page(options: PageOptions, body: Html, status = 200): Response {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${options.csrf}">
<title>${options.title} · Example app</title>
<link rel="stylesheet" href="/assets/style.css">
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<header>
  <a href="/">Example app</a>
  <nav>${options.signedIn
    ? html`<a href="/account">Account</a> ${form('/sign-out', options.csrf, html`<button>Sign out</button>`, 'inline')}`
    : html`<a href="/sign-in">Sign in</a> <a href="/sign-up">Sign up</a>`}</nav>
</header>
<main>
<h1>${options.title}</h1>
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
${body}
</main>
</body>
</html>`;
  return new Response(document.text, { status, headers: { 'content-type': 'text/html; charset=utf-8' } });
}

/** A page for an answer that went wrong: what the person can do, never why (that goes to the log). */
export const errorPage = (status: number, message: string) =>
  page({ title: status === 404 ? 'Not found' : 'Sorry', csrf: '', signedIn: false, error: message }, html`<p><a href="/">Back to the start</a></p>`, status);

/** A POST form carrying the session's CSRF token. */
export function form(action: string, csrf: string, fields: Html, className = ''): Html {
  return html`<form method="post" action="${action}" class="${className}"><input type="hidden" name="csrf" value="${csrf}">${fields}</form>`;
}

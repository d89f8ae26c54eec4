import fc from 'fast-check';
import { oddString } from './arbitraries';
import { API_KEY, DISABLED_USER, PASSKEYS, RESETS, UPDATES, USERS } from './seed';

/** Percent-encodes every UTF-8 byte that is not unreserved; lone surrogates become U+FFFD, as a client would send. */
export const encodeSegment = (value: string): string =>
  [...Buffer.from(value, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

/** The id the server should see: a segment that does not decode stands for itself (and names nothing). */
export function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const REAL_IDS = [...Object.values(USERS), ...Object.values(RESETS), ...Object.values(UPDATES)];
const ID_CHARS = 'abcdefghijkmnpqrstuvwxyz23456789'.split('');
const JUNK = ['%', '%%', '%zz', '%2', '%00', '%FF', '%C0%AF', '%ED%A0%80', '%2F', '%5C', '%3F', '%23', '%252F', '%E2%80%AE', '%2e', 'a', '.', ';', ':', '@', '!', '$', '&', "'", '(', ')', '*', '+', ',', '=', '~'];
/** "." and ".." (also percent-encoded) are removed by the client's URL parser before any server sees them. */
const isDotSegment = (segment: string) => /^(\.|%2e){1,2}$/i.test(segment);

/** Path ids that name nothing: near misses of real ids, random ids, odd Unicode, percent junk, very long ones. */
export const junkSegment: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...REAL_IDS), fc.constantFrom('upper', 'short', 'long', 'space')).map(([id, how]) => encodeSegment({ upper: id.toUpperCase(), short: id.slice(1), long: `${id}2`, space: ` ${id}` }[how])) },
    { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...ID_CHARS), minLength: 24, maxLength: 24 }) },
    { weight: 2, arbitrary: oddString.filter((s) => s.length > 0).map(encodeSegment) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...JUNK), { minLength: 1, maxLength: 8 }).map((a) => a.join('')) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 8000 }).map((n) => 'a'.repeat(n)) },
  )
  .filter((segment) => segment.length > 0 && !isDotSegment(segment));

/** The seeded ids of the kind a route's path names. */
const idsFor = (template: string): string[] =>
  template.startsWith('/users/') ? Object.values(USERS) : template.startsWith('/password-reset-requests/') ? Object.values(RESETS) : Object.values(UPDATES);

/** Where only some seeded ids lead to success: the user with TOTP, the live requests. */
const GOOD_IDS: Record<string, string[]> = {
  '/users/:id/verify-2fa/totp': [USERS.totp],
  '/users/:id/totp-credential': [USERS.totp],
  '/users/:id/verify-email': [USERS.mail],
  '/password-reset-requests/:id': [RESETS.open, RESETS.last],
  '/password-reset-requests/:id/verify-email': [RESETS.open],
  '/email-update-requests/:id': [UPDATES.fresh, UPDATES.taken, UPDATES.last],
  // Both seeded registration challenges belong to the user without passkeys.
  '/users/:id/passkeys': [USERS.bare],
  '/users/:id/passkeys/:passkey_id': [USERS.mail],
  '/users/:id/api-keys/:key_id': [USERS.mail],
  '/users/:id/verify-2fa/passkey': [USERS.mail],
  // Easy successes, where the disabled user is refused (USER_DISABLED) instead.
  '/users/:id/email-verification-request': [...Object.values(USERS), DISABLED_USER],
  '/users/:id/password-reset-requests': [...Object.values(USERS), DISABLED_USER],
};

/** Mostly seeded ids of the right kind, so that the checks after the path's 404 run too. */
export const pathSegmentFor = (template: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...(GOOD_IDS[template] ?? idsFor(template))) },
    { weight: 2, arbitrary: fc.constantFrom(...idsFor(template)) },
    { weight: 1, arbitrary: fc.constantFrom(...REAL_IDS) },
    { weight: 4, arbitrary: junkSegment },
  );

const QUERY_NAMES = [
  'sort_by', 'sort_order', 'per_page', 'page', 'email_query', '__proto__[x]', 'constructor[prototype][x]', 'a[]', 'page[]', '', 'client_ip', 'password',
  'user_id', 'type', 'after', 'limit',
];
const QUERY_VALUES = [
  'id', 'created_at', 'ascending', 'descending', 'ID', 'Descending', '0', '-1', '1', '2', '20', '1000', '1001', '99999999999999999999999', '1e3', '0x10', '+1', ' 1', '1.5',
  '', '%', '%zz', '%00', '%ED%A0%80', 'example', 'EXAMPLE.COM', '%25', '_', '%5F', 'ada', 'x%2By', 'user.created', 'password.incorrect',
];
const queryPair = fc.tuple(
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_NAMES) }, { weight: 1, arbitrary: oddString.map(encodeSegment) }),
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_VALUES) }, { weight: 1, arbitrary: oddString.map(encodeSegment) }),
  fc.boolean(),
);

/** A query string (without "?"): known and unknown names, repeats, junk encodings, names without values. */
export const queryString: fc.Arbitrary<string> = fc.oneof(
  fc.array(queryPair, { maxLength: 6 }).map((pairs) => pairs.map(([k, v, bare]) => (bare && v === '' ? k : `${k}=${v}`)).join('&')),
  fc.constantFrom('&&&', '=', '%', 'a=%zz', 'a=1&a=2&a=3', 'per_page=1&per_page=2', '?', '#', 'x'.repeat(5000)),
);

/** The second id of `/users/:id/passkeys/:passkey_id`: mostly the seeded passkey (of the mail user). */
export const passkeySegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(PASSKEYS.ids.passkey) },
  { weight: 2, arbitrary: junkSegment },
);

/** The request path for a route template like `/users/:id/verify-email`; `:key_id` is the seeded API key's. */
export const buildPath = (template: string, segment: string, query: string | undefined, passkey = PASSKEYS.ids.passkey) =>
  template.replace(/:[^/]+/, () => segment).replace(':passkey_id', () => passkey).replace(':key_id', () => API_KEY.id) + (query === undefined ? '' : `?${query}`);

import type { TProperties } from '@sinclair/typebox';
import { t } from 'elysia';
import { FormatRegistry } from 'elysia/type-system';
import { ClientIp, DOCUMENTED_AS, text64, unixSeconds } from '../http/fields';
import { isPasskeyName } from './webauthn/names';
import type { PasskeyRecord } from './store';

export const TAG = 'Passkeys';

const USER_ID = 'x7gq2m9kd4a8rfe3hn5pjc6w';
const CHALLENGE_ID = 'k3mf8qz2hv9wne4rp6tjc7xa';
/** WebAuthn's JSON keeps growing fields: they pass through, in answers and in relayed responses. */
const open = { additionalProperties: true } as const;
const B64 = (example: string, description?: string) => t.String({ description, examples: [example] });

FormatRegistry.Set('gatehouse-passkey-name', isPasskeyName);
const PasskeyName = t.String({
  format: 'gatehouse-passkey-name',
  [DOCUMENTED_AS]: { minLength: 1, maxLength: 64, pattern: String.raw`^[^\p{Cc}\p{Cs}]*$` },
  description: '1 to 64 characters (Unicode code points), no control characters (Unicode Cc) and no lone surrogates',
  examples: ['Work laptop'],
});

export const Passkey = t.Object({
  id: t.String({ examples: ['p4ss2kyq8m3dz7hf9wr6tjca'] }),
  user_id: t.String({ examples: [USER_ID] }),
  name: t.String({ examples: ['iCloud Keychain'] }),
  created_at: unixSeconds(),
  last_used_at: t.Union([unixSeconds('Unix seconds of the last login or second factor with it'), t.Null()]),
  backed_up: t.Boolean({ description: 'Whether the authenticator says the passkey is synced or backed up' }),
  transports: t.Array(t.String(), { description: 'How the browser can reach the authenticator', examples: [['internal', 'hybrid']] }),
});
export type PasskeyView = typeof Passkey.static;

export const toPasskeyView = (record: PasskeyRecord): PasskeyView => ({
  id: record.id,
  user_id: record.userId,
  name: record.name,
  created_at: record.createdAt,
  last_used_at: record.lastUsedAt,
  backed_up: record.backedUp,
  transports: record.transports,
});

const UserVerificationField = t.Union([t.Literal('required'), t.Literal('preferred')], {
  description: 'Whether the authenticator must verify the user (PIN, biometrics); default preferred',
  examples: ['preferred'],
});

export const RegistrationOptionsBody = t.Object({ user_verification: t.Optional(UserVerificationField) });

export const AuthenticationOptionsBody = t.Object(
  {
  user_id: t.Optional(
    t.Union([text64({ description: 'Limits the options to this user\'s passkeys; omit for a discoverable login' }), t.Null()], {
      examples: [USER_ID],
    }),
  ),
  purpose: t.Optional(
    t.Union([t.Literal('login'), t.Literal('second_factor')], {
      description: 'login (default; user verification required) for POST /authenticate/passkey, second_factor (needs user_id) for POST /users/{id}/verify-2fa/passkey',
      examples: ['login'],
    }),
  ),
  client_ip: ClientIp,
  },
  {
    // The service refuses second_factor without a user (INVALID_DATA); the document says so.
    [DOCUMENTED_AS]: {
      if: { required: ['purpose'], properties: { purpose: { const: 'second_factor' } } },
      then: { required: ['user_id'], properties: { user_id: { type: 'string' } } },
    },
  },
);

const CLIENT_DATA = 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiLi4uIn0';
const CREDENTIAL_ID = 'Yx8kM0Qf3rZP1tWc9vB2nE5hLs7uJ4aD6gK8oR0iT2w';

/** The browser's `credential.toJSON()` (or @simplewebauthn/browser's answer), relayed as it is. */
const credentialFields = <Response extends TProperties>(response: Response) => ({
  id: B64(CREDENTIAL_ID, 'base64url credential id'),
  rawId: B64(CREDENTIAL_ID),
  type: t.String({ examples: ['public-key'] }),
  response: t.Object(response, open),
  authenticatorAttachment: t.Optional(t.Union([t.String(), t.Null()])),
  clientExtensionResults: t.Optional(t.Unknown()),
});

export const RegistrationResponse = t.Object(
  credentialFields({
    clientDataJSON: B64(CLIENT_DATA),
    attestationObject: B64('o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVik...'),
    transports: t.Optional(t.Array(t.String(), { examples: [['internal', 'hybrid']] })),
  }),
  { ...open, description: 'The `PublicKeyCredential` of `navigator.credentials.create()`, as JSON' },
);

export const AuthenticationResponse = t.Object(
  credentialFields({
    clientDataJSON: B64(CLIENT_DATA),
    authenticatorData: B64('SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ'),
    signature: B64('MEUCIQDp...'),
    userHandle: t.Optional(t.Union([t.String(), t.Null()], { examples: ['eDdncTJtOWtkNGE4cmZlM2huNXBqYzZ3'] })),
  }),
  { ...open, description: 'The `PublicKeyCredential` of `navigator.credentials.get()`, as JSON' },
);

const ChallengeId = text64({ description: 'From the options call; single use, valid 5 minutes', examples: [CHALLENGE_ID] });

export const RegisterPasskeyBody = t.Object({
  challenge_id: ChallengeId,
  response: RegistrationResponse,
  name: t.Optional(PasskeyName),
});

export const RenamePasskeyBody = t.Object({ name: PasskeyName });

export const AuthenticatePasskeyBody = t.Object({ challenge_id: ChallengeId, response: AuthenticationResponse, client_ip: ClientIp });
export const VerifyPasskeyBody = t.Object({ challenge_id: ChallengeId, response: AuthenticationResponse });

const Descriptor = t.Object({ id: t.String(), type: t.String(), transports: t.Optional(t.Array(t.String())) }, open);

/** Standard `PublicKeyCredentialCreationOptionsJSON`, for `PublicKeyCredential.parseCreationOptionsFromJSON`. */
const CreationOptions = t.Object(
  {
    rp: t.Object({ id: t.Optional(t.String()), name: t.String() }, open),
    user: t.Object({ id: t.String({ description: 'base64url of the user id' }), name: t.String(), displayName: t.String() }, open),
    challenge: t.String(),
    pubKeyCredParams: t.Array(t.Object({ type: t.String(), alg: t.Number() }, open)),
    timeout: t.Optional(t.Number()),
    excludeCredentials: t.Optional(t.Array(Descriptor)),
    authenticatorSelection: t.Optional(t.Object({}, open)),
    attestation: t.Optional(t.String()),
    extensions: t.Optional(t.Object({}, open)),
    hints: t.Optional(t.Array(t.String())),
  },
  open,
);

/** Standard `PublicKeyCredentialRequestOptionsJSON`, for `PublicKeyCredential.parseRequestOptionsFromJSON`. */
const RequestOptions = t.Object(
  {
    challenge: t.String(),
    rpId: t.Optional(t.String()),
    timeout: t.Optional(t.Number()),
    allowCredentials: t.Optional(t.Array(Descriptor)),
    userVerification: t.Optional(t.String()),
    extensions: t.Optional(t.Object({}, open)),
    hints: t.Optional(t.Array(t.String())),
  },
  open,
);

export const RegistrationOptions = t.Object(
  { challenge_id: t.String({ examples: [CHALLENGE_ID] }), options: CreationOptions },
  {
    examples: [
      {
        challenge_id: CHALLENGE_ID,
        options: {
          rp: { name: 'Example', id: 'example.com' },
          user: { id: 'eDdncTJtOWtkNGE4cmZlM2huNXBqYzZ3', name: 'ada@example.com', displayName: 'ada@example.com' },
          challenge: 'm2Zq0Vt1cQe9Yb7R4uXw8sKpL3nJ6hGf5dA1oE2iT0U',
          pubKeyCredParams: [{ alg: -8, type: 'public-key' }, { alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
          timeout: 300000,
          attestation: 'none',
          excludeCredentials: [],
          authenticatorSelection: { residentKey: 'required', userVerification: 'preferred', requireResidentKey: true },
          extensions: { credProps: true },
          hints: [],
        },
      },
    ],
  },
);

export const AuthenticationOptions = t.Object(
  { challenge_id: t.String({ examples: [CHALLENGE_ID] }), options: RequestOptions },
  {
    examples: [
      {
        challenge_id: CHALLENGE_ID,
        options: { rpId: 'example.com', challenge: 'Qm9X3aZr7Lk2Vw8NcT4yHs1pUe6Df0Gj5bIo9RqEt2M', timeout: 300000, userVerification: 'required' },
      },
    ],
  },
);
export type RegistrationOptionsView = typeof RegistrationOptions.static;
export type AuthenticationOptionsView = typeof AuthenticationOptions.static;

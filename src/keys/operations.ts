/**
 * Every operationId of the document (API.md §16) with its method: what a key's scope may name.
 * Kept here, not read from the app, so `gatehouse keys add` and a refused keys file need no server
 * modules. createApp checks every route against it (an operation missing here stops the app from
 * being built), and test/service-keys.test.ts checks it equals the served document.
 */
export const OPERATIONS = {
  getServiceInfo: 'GET',
  getHealth: 'GET',
  createUser: 'POST',
  listUsers: 'GET',
  getUser: 'GET',
  deleteUser: 'DELETE',
  disableUser: 'POST',
  enableUser: 'POST',
  clearUserLockouts: 'POST',
  clearAddressLimits: 'POST',
  authenticateWithPassword: 'POST',
  verifyUserPassword: 'POST',
  updateUserPassword: 'POST',
  createEmailVerificationRequest: 'POST',
  getEmailVerificationRequest: 'GET',
  deleteEmailVerificationRequest: 'DELETE',
  verifyEmail: 'POST',
  createEmailUpdateRequest: 'POST',
  listEmailUpdateRequests: 'GET',
  deleteEmailUpdateRequests: 'DELETE',
  getEmailUpdateRequest: 'GET',
  deleteEmailUpdateRequest: 'DELETE',
  verifyNewEmail: 'POST',
  registerTotp: 'POST',
  getTotpCredential: 'GET',
  deleteTotpCredential: 'DELETE',
  verifyTotp: 'POST',
  regenerateRecoveryCode: 'POST',
  resetSecondFactors: 'POST',
  createPasswordResetRequest: 'POST',
  listPasswordResetRequests: 'GET',
  invalidatePasswordResetRequests: 'DELETE',
  getPasswordResetRequest: 'GET',
  invalidatePasswordResetRequest: 'DELETE',
  verifyPasswordResetEmail: 'POST',
  resetPassword: 'POST',
  createEmailSignInRequest: 'POST',
  authenticateWithEmailCode: 'POST',
  listEmailSignInRequests: 'GET',
  deleteEmailSignInRequests: 'DELETE',
  createPasskeyAuthenticationOptions: 'POST',
  authenticateWithPasskey: 'POST',
  createPasskeyRegistrationOptions: 'POST',
  registerPasskey: 'POST',
  listPasskeys: 'GET',
  verifyPasskey: 'POST',
  renamePasskey: 'PATCH',
  deletePasskey: 'DELETE',
  createApiKey: 'POST',
  listApiKeys: 'GET',
  deleteApiKey: 'DELETE',
  deleteApiKeys: 'DELETE',
  verifyApiKey: 'POST',
  listEvents: 'GET',
  getMetrics: 'GET',
} as const satisfies Record<string, 'GET' | 'POST' | 'PATCH' | 'DELETE'>;

export type OperationId = keyof typeof OPERATIONS;

export const isOperationId = (name: string): name is OperationId => Object.hasOwn(OPERATIONS, name);

/** The operations the `read` scope allows: every GET (Elysia answers HEAD on the same routes). */
export const READ_OPERATIONS: readonly OperationId[] = (Object.keys(OPERATIONS) as OperationId[]).filter((id) => OPERATIONS[id] === 'GET');

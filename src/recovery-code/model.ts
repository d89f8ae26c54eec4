import { t } from 'elysia';
import { RecoveryCode } from '../http/fields';

/** Recovery codes belong with TOTP in the docs: both are second factors. */
export const TAG = 'Two-factor';

export const ResetSecondFactorsBody = t.Object({ recovery_code: RecoveryCode });

export const RecoveryCodeResponse = t.Object({
  recovery_code: t.String({ description: 'The new recovery code; the previous one no longer works', examples: ['7KQ2MZXDH3PA9WEN'] }),
});
export type RecoveryCodeView = typeof RecoveryCodeResponse.static;

// A row written for a user deleted since the service loaded it is refused by its foreign key: each
// store says false (the service answers NOT_FOUND) and nothing is stored. One helper per engine,
// writtenUnlessUserGone (src/db/constraints.ts, src/db/pg-errors.ts), serves every such write.
import { describe, expect, test } from 'bun:test';
import { createHarness } from './support/harness';

const h = createHarness();
const GONE = 'nosuchuser0000000000000000';

describe('writes for a user that is gone', () => {
  test('every store refuses them with false and stores nothing; for a user that exists they succeed', async () => {
    const user = await h.createUser();
    const now = Math.floor(h.now() / 1000);
    const later = now + 600;
    const { stores } = h;
    for (const [userId, expected] of [[GONE, false], [user.id, true]] as const) {
      const request = { userId, createdAt: now, expiresAt: later, failedAttempts: 0 };
      const ids = { reset: `reset-${userId}`, signIn: `signin-${userId}`, update: `update-${userId}`, challenge: `challenge-${userId}` };
      expect(await stores.passwordReset.insert({ ...request, id: ids.reset, codeHash: 'x'.repeat(64), emailVerified: false })).toBe(expected);
      expect(await stores.emailSignIn.insert({ ...request, id: ids.signIn, email: 'gone@example.com', codeHash: 'x'.repeat(64) })).toBe(expected);
      expect(await stores.emailUpdate.insert({ ...request, id: ids.update, email: 'new@example.com', code: 'ABCDEFGH' })).toBe(expected);
      expect(await stores.emailVerification.replace({ ...request, code: 'ABCDEFGH' })).toBe(expected);
      const totp = await stores.totp.save({ userId, createdAt: now, key: Buffer.alloc(20, 7).toString('base64'), lastUsedStep: 0 }, [], () => false);
      expect(totp).toBe(expected ? 'saved' : 'gone');
      const challenge = { id: ids.challenge, ceremony: 'registration', purpose: null, userId, challenge: 'c', userVerification: 'preferred', expiresAt: later } as const;
      expect(await stores.passkeys.insertChallenge(challenge)).toBe(expected);

      const stored = [
        await stores.passwordReset.findLive(ids.reset, now),
        await stores.emailSignIn.findLive(ids.signIn, now),
        await stores.emailUpdate.findLive(ids.update, now),
        await stores.emailVerification.findLive(userId, now),
        await stores.totp.find(userId),
        await stores.passkeys.findLiveChallenge(ids.challenge, now),
      ];
      expect(stored.map((row) => row !== undefined)).toEqual(stored.map(() => expected));
    }
  });
});

import { checkCode, newRequestTimes } from '../code-requests/service';
import { AppError } from '../errors';
import { draft, wrongCodeEvents } from '../events/model';
import { nowSeconds, type Clock } from '../security/clock';
import { normalizeEmail } from '../security/email-address';
import { generateId, generateOneTimeCode } from '../security/random';
import { enforce, type RateLimits } from '../limits/rate-limit';
import { toUpdateView, type NewEmailView, type UpdateRequestView } from './model';
import type { EmailUpdateStore } from './store';
import { rejectDisabled } from '../users/model';
import type { UserRecord, UserStore } from '../users/store';

export function createEmailUpdateService({ store, users, limits, clock }: { store: EmailUpdateStore; users: UserStore; limits: RateLimits; clock: Clock }) {
  const now = () => nowSeconds(clock);
  const live = async (id: string) => {
    const request = await store.findLive(id, now());
    if (request === undefined) throw new AppError('NOT_FOUND');
    return request;
  };
  return {
    /** The user's own current address is allowed. */
    async create(user: UserRecord, newEmail: string): Promise<UpdateRequestView> {
      const userId = user.id;
      const email = normalizeEmail(newEmail);
      rejectDisabled(user, now());
      // Counted before the address check, so the endpoint cannot probe addresses faster than 3 per 15 minutes.
      enforce(await limits.emailUpdateRequests.hit(userId));
      if (await store.heldByOther(email, userId)) throw new AppError('EMAIL_ALREADY_USED');
      const record = { id: generateId(), userId, email, code: generateOneTimeCode(), ...newRequestTimes(now()), failedAttempts: 0 };
      if (!(await store.insert(record))) throw new AppError('NOT_FOUND');
      return toUpdateView(record);
    },

    list: async (userId: string): Promise<UpdateRequestView[]> => (await store.listLive(userId, now())).map(toUpdateView),
    deleteAllOf: (userId: string) => store.deleteAllOf(userId),
    get: async (id: string): Promise<UpdateRequestView> => toUpdateView(await live(id)),
    async delete(id: string): Promise<void> {
      if (!(await store.deleteLive(id, now()))) throw new AppError('NOT_FOUND');
    },

    /** INVALID_REQUEST, then the user's lockout and the code (one check at a time per user), then the update. */
    async confirm(input: { requestId: string; code: string }): Promise<NewEmailView> {
      const liveRequest = async () => {
        const request = await store.findLive(input.requestId, now());
        if (request === undefined) throw new AppError('INVALID_REQUEST');
        return request;
      };
      const { userId } = await liveRequest();
      const owner = await users.find(userId);
      if (owner === undefined) throw new AppError('INVALID_REQUEST');
      rejectDisabled(owner, now());
      // Looked up again in turn: a request invalidated by the check before this one is INVALID_REQUEST.
      const request = await limits.serial.run(`email-update:${userId}`, async () => {
        const current = await liveRequest();
        await checkCode({
          userId,
          lockout: limits.emailUpdateVerify,
          given: input.code,
          issued: current.code,
          countWrongCode: (locked) => store.recordWrongCode(current.id, now(), wrongCodeEvents(now(), userId, locked)),
        });
        return current;
      });
      // The new address is verified by this very code: email.updated says both.
      const outcome = await store.apply(request, now(), [draft('email.updated', now(), userId)]);
      if (outcome === 'gone') throw new AppError('INVALID_REQUEST');
      if (outcome === 'taken') throw new AppError('EMAIL_ALREADY_USED');
      return { email: request.email };
    },
  };
}
export type EmailUpdateService = ReturnType<typeof createEmailUpdateService>;

import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { documented, noContent } from '../http/docs';
import { AppError, notFound } from '../http/errors';
import { assertStrongPassword, pathUser } from '../http/guards';
import { presentClientIp } from '../http/models';
import { normalizeEmail } from '../security/email-address';
import { KeyedSerializer } from '../security/keyed-serializer';
import { dummyPasswordHash } from '../security/password-hash';
import { User } from '../users/model';
import type { UserQueries } from '../users/repository';
import { recordIncorrectPassword, runPasswordCheck } from './login-attempts';
import { AuthenticateBody, UpdatePasswordBody, VerifyPasswordBody } from './model';

const TAG = 'Passwords';
const incorrectPassword = () => new AppError(400, 'INCORRECT_PASSWORD');

export function passwordsRoutes(deps: Deps, queries: UserQueries) {
  const perAddress = new KeyedSerializer();
  const checkPassword = async (passwordHash: string, password: string, clientIp: string | null) => {
    if (await deps.hasher.verify(password, passwordHash)) return;
    recordIncorrectPassword(deps, clientIp);
    throw incorrectPassword();
  };

  const authenticate = new Elysia().post(
    '/authenticate/password',
    ({ body }) => {
      const clientIp = presentClientIp(body.client_ip);
      return runPasswordCheck(deps, perAddress, clientIp, async () => {
        const user = queries.findRowByEmail(normalizeEmail(body.email));
        if (user === undefined) {
          // The same work as a wrong password, so timing does not reveal which emails exist.
          await deps.hasher.verify(body.password, await dummyPasswordHash());
          recordIncorrectPassword(deps, clientIp);
          throw notFound();
        }
        await checkPassword(user.passwordHash, body.password, clientIp);
        return queries.findView(user.id)!;
      });
    },
    {
      body: AuthenticateBody,
      ...documented({
        summary: 'Authenticate with email and password',
        tag: TAG,
        description: 'Unknown email answers NOT_FOUND after the same work as a wrong password. Failures count toward the login block of client_ip.',
        errors: ['INVALID_DATA', 'TOO_MANY_REQUESTS', 'NOT_FOUND', 'INCORRECT_PASSWORD', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
        ok: User,
      }),
    },
  );

  const forUser = new Elysia()
    .use(pathUser(queries.findRow))
    .post(
      '/users/:id/verify-password',
      ({ body, user }) => {
        const clientIp = presentClientIp(body.client_ip);
        return runPasswordCheck(deps, perAddress, clientIp, async () => {
          await checkPassword(user.passwordHash, body.password, clientIp);
          return noContent();
        });
      },
      {
        body: VerifyPasswordBody,
        ...documented({
          summary: "Verify a user's password",
          tag: TAG,
          description: 'After 5 incorrect passwords from one client_ip within 15 minutes, that address is blocked for 15 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'INCORRECT_PASSWORD', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
        }),
      },
    )
    .post(
      '/users/:id/update-password',
      ({ body, user }) => {
        const clientIp = presentClientIp(body.client_ip);
        return runPasswordCheck(deps, perAddress, clientIp, async () => {
          await assertStrongPassword(deps, body.new_password);
          await checkPassword(user.passwordHash, body.password, clientIp);
          const passwordHash = await deps.hasher.hash(body.new_password);
          if (!queries.update(user.id, { passwordHash })) throw notFound();
          return noContent();
        });
      },
      {
        body: UpdatePasswordBody,
        ...documented({
          summary: "Update a user's password",
          tag: TAG,
          description: 'A wrong current password answers INCORRECT_PASSWORD and counts toward the login block.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'WEAK_PASSWORD', 'INCORRECT_PASSWORD', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
        }),
      },
    );

  return new Elysia().use(authenticate).use(forUser);
}

import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import type { UserQueries } from '../users/repository';
import { emailUpdateRoutes } from './update-routes';
import { emailVerificationRoutes } from './verification-routes';

export const emailRoutes = (deps: Deps, queries: UserQueries) =>
  new Elysia().use(emailVerificationRoutes(deps, queries)).use(emailUpdateRoutes(deps, queries));

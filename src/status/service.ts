import { AppError } from '../errors';
import { VERSION } from '../version';
import type { AboutView, HealthView } from './model';
import type { StatusStore } from './store';

export function createStatusService({ store }: { store: StatusStore }) {
  return {
    about: (): AboutView => ({ name: 'gatehouse', version: VERSION }),
    async health(): Promise<HealthView> {
      try {
        await store.ping();
        return { status: 'ok' };
      } catch {
        throw new AppError('UNAVAILABLE');
      }
    },
  };
}
export type StatusService = ReturnType<typeof createStatusService>;

import { Elysia, t } from 'elysia';
import { AppError } from '../errors';
import { documented } from '../http/openapi';
import { Event, EVENT_TYPES, ListEventsQuery, parseEventQuery, TAG } from './model';
import type { EventsService } from './service';

export function eventsRoutes(events: EventsService) {
  return new Elysia().get(
    '/events',
    async ({ request, set }) => {
      // From the URL itself: Elysia's parsed query keeps only one value of a repeated parameter.
      const query = parseEventQuery(new URL(request.url).searchParams);
      if (query === undefined) throw new AppError('INVALID_DATA');
      const page = await events.list(query);
      set.headers['x-next-after'] = String(page.nextAfter);
      return page.items;
    },
    {
      query: ListEventsQuery,
      ...documented({
        operationId: 'listEvents', summary: 'List security events',
        tag: TAG,
        description:
          'Oldest first. Every filter is optional; an empty value is the same as none. A value that is not valid (an unknown type, ' +
          '`after` not digits, `limit` not digits from 1 to 1000, a parameter given twice) answers INVALID_DATA rather than ' +
          'falling back, so a reader never skips or replays events by mistake. The `X-Next-After` header holds the id of the last ' +
          'event returned, or the `after` sent when the page is empty: pass it as `after` to read on. Events are kept for ' +
          `--events-retention-days (90 by default). Types: ${EVENT_TYPES.join(', ')}.`,
        errors: ['INVALID_DATA'],
        ok: t.Array(Event),
      }),
    },
  );
}

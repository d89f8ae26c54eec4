import { describe, expect, test } from 'bun:test';
import { MAX_DISABLE_SECONDS } from '../src/users/model';
import { allowEvents, eventsDuring, refuseEvents, summary } from './support/events';
import { createHarness, expectError, type Harness } from './support/harness';
import { rowOf, updateRows } from './support/rows';

/** API.md §14: disable, enable, and a disabled_until that passes by itself. */

const START_MS = Date.UTC(2030, 0, 1);
const NOW = START_MS / 1000;

async function setup() {
  const h = createHarness({ startMs: START_MS });
  await h.ready;
  const user = await h.createUser({ email: 'ada@example.com' });
  const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
  return { h, user, during };
}

const disable = (h: Harness, id: string, body?: unknown) => h.call('POST', `/users/${id}/disable`, body === undefined ? {} : { body });
const enable = (h: Harness, id: string) => h.call('POST', `/users/${id}/enable`);
const stateOf = async (h: Harness, id: string) => {
  const { disabled, disabled_until } = (await h.call('GET', `/users/${id}`)).json;
  return { disabled, disabled_until };
};

describe('POST /users/{id}/disable', () => {
  test('without until: disabled until enabled; the answer, GET and the list show it; one user.disabled event', async () => {
    const { h, user, during } = await setup();
    let res: Awaited<ReturnType<typeof disable>> | undefined;
    expect(await during(async () => (res = await disable(h, user.id)))).toEqual([['user.disabled', user.id, null]]);
    expect(res!.status).toBe(200);
    expect(res!.json).toMatchObject({ id: user.id, email: 'ada@example.com', disabled: true, disabled_until: null });
    expect(await stateOf(h, user.id)).toEqual({ disabled: true, disabled_until: null });
    expect((await h.call('GET', '/users')).json[0]).toMatchObject({ id: user.id, disabled: true, disabled_until: null });
    // Years later it is still disabled: no until, no end.
    h.advance(20 * 365 * 86_400_000);
    expect(await stateOf(h, user.id)).toEqual({ disabled: true, disabled_until: null });
  });

  test('with until: disabled until that second, then reads as enabled with no write', async () => {
    const { h, user } = await setup();
    const res = await disable(h, user.id, { until: NOW + 60 });
    expect(res.json).toMatchObject({ disabled: true, disabled_until: NOW + 60 });
    h.advance(59_999);
    expect(await stateOf(h, user.id)).toEqual({ disabled: true, disabled_until: NOW + 60 });
    h.advance(1);
    expect(await stateOf(h, user.id)).toEqual({ disabled: false, disabled_until: null });
    expect((await h.call('GET', '/users')).json[0]).toMatchObject({ disabled: false, disabled_until: null });
    // Nothing was written: the row still holds the old state, which no longer applies.
    expect(await rowOf(h, 'users', { id: user.id })).toMatchObject({ disabled: true, disabledUntil: NOW + 60 });
    // And it behaves as enabled: a request that USER_DISABLED refuses passes.
    expect((await h.call('POST', `/users/${user.id}/email-verification-request`)).status).toBe(200);
  });

  test('disabling a disabled user replaces until (also with none), each time with an event', async () => {
    const { h, user, during } = await setup();
    await disable(h, user.id, { until: NOW + 60 });
    expect(await during(async () => expect((await disable(h, user.id, { until: NOW + 3600 })).json.disabled_until).toBe(NOW + 3600))).toEqual([['user.disabled', user.id, null]]);
    expect((await disable(h, user.id, { until: null })).json).toMatchObject({ disabled: true, disabled_until: null });
    expect((await disable(h, user.id, { until: NOW + 30 })).json).toMatchObject({ disabled: true, disabled_until: NOW + 30 });
  });

  test('until must be an integer later than now and at most 10 years ahead: INVALID_DATA, nothing changes', async () => {
    const { h, user, during } = await setup();
    const bad = [NOW, NOW - 1, 0, -5, NOW + MAX_DISABLE_SECONDS + 1, NOW + 0.5, String(NOW + 60), true, [NOW + 60], { at: NOW + 60 }, 1e300];
    for (const until of bad) {
      expect({ until, events: await during(async () => expectError(await disable(h, user.id, { until }), 400, 'INVALID_DATA')) }).toEqual({ until, events: [] });
    }
    expectError(await h.call('POST', `/users/${user.id}/disable`, { rawBody: '[1]' }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', `/users/${user.id}/disable`, { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expect(await stateOf(h, user.id)).toEqual({ disabled: false, disabled_until: null });
    expect((await disable(h, user.id, { until: NOW + MAX_DISABLE_SECONDS })).json.disabled_until).toBe(NOW + MAX_DISABLE_SECONDS);
    expect((await disable(h, user.id, { until: NOW + 1 })).json.disabled_until).toBe(NOW + 1);
  });

  test('an unknown user is NOT_FOUND, before the body is looked at; unknown fields are ignored', async () => {
    const { h, user } = await setup();
    expectError(await disable(h, 'nobody', { until: 'soon' }), 404, 'NOT_FOUND');
    expectError(await enable(h, 'nobody'), 404, 'NOT_FOUND');
    expect((await disable(h, user.id, { reason: 'fraud' })).json.disabled).toBe(true);
    // No body at all is an empty object.
    expect((await h.call('POST', `/users/${user.id}/disable`, { rawBody: '' })).status).toBe(200);
  });

  test('the change and its event commit together', async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    await disable(h, user.id);
    await refuseEvents(h);
    expect((await disable(h, other.id)).status).toBe(500);
    expect(await stateOf(h, other.id)).toEqual({ disabled: false, disabled_until: null });
    expect((await disable(h, user.id, { until: NOW + 60 })).status).toBe(500);
    expect((await enable(h, user.id)).status).toBe(500);
    expect(await stateOf(h, user.id)).toEqual({ disabled: true, disabled_until: null });
    await allowEvents(h);
    expect((await enable(h, user.id)).status).toBe(200);
  });
});

describe('POST /users/{id}/enable', () => {
  test('enables a disabled user with one user.enabled event; an enabled one answers 200 with no event', async () => {
    const { h, user, during } = await setup();
    expect(await during(async () => expect((await enable(h, user.id)).json).toMatchObject({ id: user.id, disabled: false, disabled_until: null }))).toEqual([]);
    await disable(h, user.id, { until: NOW + 600 });
    let res: Awaited<ReturnType<typeof enable>> | undefined;
    expect(await during(async () => (res = await enable(h, user.id)))).toEqual([['user.enabled', user.id, null]]);
    expect(res!.status).toBe(200);
    expect(res!.json).toMatchObject({ id: user.id, disabled: false, disabled_until: null });
    expect(await rowOf(h, 'users', { id: user.id })).toMatchObject({ disabled: false, disabledUntil: null });
    expect(await during(() => enable(h, user.id))).toEqual([]);
  });

  test('a user whose disabled_until has passed is enabled already: no event', async () => {
    const { h, user, during } = await setup();
    await disable(h, user.id, { until: NOW + 10 });
    h.advance(10_000);
    expect(await during(async () => expect((await enable(h, user.id)).json.disabled).toBe(false))).toEqual([]);
  });

  test('ignores any body', async () => {
    const { h, user } = await setup();
    await disable(h, user.id);
    expect((await h.call('POST', `/users/${user.id}/enable`, { rawBody: 'not json' })).json.disabled).toBe(false);
  });

  test('parallel enables of one disabled user write one event', async () => {
    const { h, user, during } = await setup();
    await disable(h, user.id);
    const events = await during(() => Promise.all(Array.from({ length: 8 }, () => enable(h, user.id))));
    expect(events).toEqual([['user.enabled', user.id, null]]);
  });
});

describe('a state written straight into the database', () => {
  test('disabled with a null until is disabled; not disabled with an until is enabled', async () => {
    const { h, user } = await setup();
    await updateRows(h, 'users', { disabled: true, disabledUntil: null }, { id: user.id });
    expect(await stateOf(h, user.id)).toEqual({ disabled: true, disabled_until: null });
    await updateRows(h, 'users', { disabled: false, disabledUntil: NOW + 100 }, { id: user.id });
    expect(await stateOf(h, user.id)).toEqual({ disabled: false, disabled_until: null });
  });
});

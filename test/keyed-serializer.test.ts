import { expect, test } from 'bun:test';
import { KeyedSerializer } from '../src/limits/keyed-serializer';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('tasks of one key run one at a time, in order, and other keys run alongside', async () => {
  const serializer = new KeyedSerializer();
  const events: string[] = [];
  const task = (name: string, ms: number) => async () => {
    events.push(`start ${name}`);
    await sleep(ms);
    events.push(`end ${name}`);
    return name;
  };
  const results = await Promise.all([
    serializer.run('a', task('a1', 30)),
    serializer.run('a', task('a2', 1)),
    serializer.run('b', task('b1', 1)),
  ]);
  expect(results).toEqual(['a1', 'a2', 'b1']);
  expect(events.indexOf('end a1')).toBeLessThan(events.indexOf('start a2'));
  expect(events.indexOf('start b1')).toBeLessThan(events.indexOf('end a1'));
});

test('a failing task does not stop the next one, and idle keys are forgotten', async () => {
  const serializer = new KeyedSerializer();
  const failed = serializer.run('k', async () => {
    throw new Error('boom');
  });
  const next = serializer.run('k', async () => 'ran');
  await expect(failed).rejects.toThrow('boom');
  expect(await next).toBe('ran');
  await sleep(0);
  expect(serializer.size).toBe(0);
});

import { expect } from 'bun:test';

/**
 * Verifies of one key keep arriving while it is deleted: every verify sent after the delete answered
 * is INVALID_API_KEY, and the ones before it succeed (the key was good until then).
 */
export async function deleteDuringVerifies(
  send: (n: number, method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>,
  userId: string,
  created: { id: string; key: string },
) {
  let deletedAt = Infinity;
  let stop = false;
  const seen: { sentAt: number; status: number; error?: string }[] = [];
  const loop = async (lane: number) => {
    for (let n = lane; !stop; n += 4) {
      const sentAt = performance.now();
      const answer = await send(n, 'POST', '/verify-api-key', { key: created.key });
      seen.push({ sentAt, status: answer.status, error: answer.json?.error });
      if (performance.now() > deletedAt + 50) stop = true;
      // In-process answers can settle without a macrotask: let the timer and the delete run.
      await Bun.sleep(0);
    }
  };
  const lanes = [0, 1, 2, 3].map(loop);
  await Bun.sleep(20);
  const deleted = await send(1, 'DELETE', `/users/${userId}/api-keys/${created.id}`);
  deletedAt = performance.now();
  expect(deleted.status).toBe(204);
  await Promise.all(lanes);
  const after = seen.filter((v) => v.sentAt > deletedAt);
  expect(after.length).toBeGreaterThan(0);
  expect(after.filter((v) => v.status !== 400 || v.error !== 'INVALID_API_KEY')).toEqual([]);
  expect(seen.filter((v) => v.status !== 200 && v.error !== 'INVALID_API_KEY')).toEqual([]);
  expect(seen.some((v) => v.status === 200)).toBe(true);
}

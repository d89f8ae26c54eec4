// The thread behind line-checker.ts: reads the file and checks its lines while the main thread stages or writes them.
import { type CheckerReply, type CheckerRequest, checkLines } from './line-checker';
import { ndjsonLines } from './ndjson';

declare const self: Worker;
/** Batches sent but not yet taken: the reader stays at most this far ahead, so memory stays flat. */
const AHEAD = 2;
let credit = AHEAD;
let wake: (() => void) | null = null;

async function check(fd: number, now: number) {
  const input = ndjsonLines(fd);
  try {
    for await (const checked of checkLines(input.batches, now)) {
      while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
      credit--;
      postMessage(JSON.stringify({ checked, bytesRead: input.bytesRead() } satisfies CheckerReply));
    }
    postMessage(JSON.stringify('end' satisfies CheckerReply));
  } catch (error) {
    postMessage(JSON.stringify({ error: error instanceof Error ? error.message : String(error) } satisfies CheckerReply));
  }
}

self.onmessage = ({ data }: MessageEvent<CheckerRequest>) => {
  if (data !== 'more') return void check(data.fd, data.now);
  credit++;
  wake?.();
  wake = null;
};

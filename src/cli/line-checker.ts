import type { CheckedLines } from '../transfer/service';
import type { CheckerReply, CheckerRequest } from './line-checker-worker';
import { collector } from './ndjson';

/** In the compiled binary the worker is a second entry point, named from `src/` (package.json's build). */
const WORKER = import.meta.url.startsWith('file:///$bunfs/') ? './cli/line-checker-worker.ts' : new URL('./line-checker-worker.ts', import.meta.url);

/**
 * Reads and checks the lines of `fd` on a second thread (about 4 µs a line: reading, JSON, the
 * field and hash formats), so the main thread only stages them: a million lines take about 5 s
 * there instead of 8. Resolves each batch as the worker sends it; stopping early ends the worker.
 */
export async function* checkedLinesInWorker(fd: number, now: number, onBytesRead: (bytes: number) => void): AsyncGenerator<CheckedLines> {
  const worker = new Worker(WORKER);
  const replies: string[] = [];
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const woken = () => {
    wake?.();
    wake = null;
  };
  worker.onmessage = ({ data }: MessageEvent<string>) => {
    replies.push(data);
    woken();
  };
  worker.onerror = (event) => {
    failure = new Error(`checking the lines: ${event.message}`);
    woken();
  };
  // The parsed batches are garbage as soon as they are staged; see ndjson.ts.
  const collect = collector();
  worker.postMessage({ fd, now } satisfies CheckerRequest);
  try {
    for (;;) {
      while (replies.length === 0 && failure === null) await new Promise<void>((resolve) => (wake = resolve));
      if (failure !== null) throw failure;
      const text = replies.shift()!;
      collect(text.length);
      const reply = JSON.parse(text) as CheckerReply;
      if (reply === 'end') return;
      if ('error' in reply) throw new Error(reply.error);
      worker.postMessage('more' satisfies CheckerRequest);
      onBytesRead(reply.bytesRead);
      yield reply.checked;
    }
  } finally {
    worker.terminate();
  }
}

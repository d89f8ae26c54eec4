import { closeSync, openSync } from 'node:fs';
import { generateId, unguessableRecoveryCodeHash } from '../security/random';
import { isProblem, parseImportLine } from '../transfer/model';
import type { CheckedLines, InputLine } from '../transfer/service';
import { collector } from './ndjson';

/** From the main thread: what to read, then one `more` for each batch it has taken. */
export type CheckerRequest = { fd: number; now: number } | 'more';
/** To the main thread, as JSON text (a structured clone costs about 4 times as much for these objects). */
export type CheckerReply = { checked: CheckedLines; bytesRead: number } | { error: string } | 'end';

/** In the compiled binary the worker is a second entry point, named from `src/` (package.json's build). */
const WORKER = import.meta.url.startsWith('file:///$bunfs/') ? './cli/line-checker-worker.ts' : new URL('./line-checker-worker.ts', import.meta.url);

/**
 * Reads and checks the lines of `fd` on a second thread (about 4 µs a line: reading, JSON, the
 * field and hash formats), so the main thread only stages or writes them. Resolves each batch as the
 * worker sends it; stopping early ends the worker.
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

/** The lines of `file` (or `-`, standard input) checked in the worker, from the file's start at each call. */
export async function* checkedLinesOf(file: string, now: number, onBytesRead: (bytes: number) => void): AsyncGenerator<CheckedLines> {
  const fd = file === '-' ? 0 : openSync(file, 'r');
  try {
    yield* checkedLinesInWorker(fd, now, onBytesRead);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/** Checks each line alone (JSON, fields, formats); `now` stands in for missing times. Uniqueness is checked later, across lines. */
export async function* checkLines(input: AsyncIterable<InputLine[]>, now: number): AsyncGenerator<CheckedLines> {
  const defaults = { now, newId: generateId, newRecoveryCodeHash: unguessableRecoveryCodeHash };
  for await (const batch of input) {
    const checked: CheckedLines = { users: [], problems: [], lines: batch.length };
    for (const line of batch) {
      if (line.unreadable !== undefined) checked.problems.push({ line: line.number, kind: 'invalid', field: null, detail: line.unreadable });
      else if (line.text.trim() === '') continue; // blank lines separate nothing and are skipped
      else {
        const parsed = parseImportLine(line.text, line.number, defaults);
        if (isProblem(parsed)) checked.problems.push(parsed);
        else checked.users.push(parsed);
      }
    }
    yield checked;
  }
}

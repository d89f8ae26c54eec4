import type { CheckpointReply, CheckpointRequest } from './checkpoint-worker';

/** In the compiled binary the worker is another entry point, named from `src/` (package.json's build). */
const WORKER = import.meta.url.startsWith('file:///$bunfs/') ? './db/checkpoint-worker.ts' : new URL('./checkpoint-worker.ts', import.meta.url);

/** Copies the WAL into the database file while the bulk writer goes on with its next transaction. */
export interface Checkpointer {
  /** Starts a checkpoint of everything committed so far, unless one is running. */
  request(): void;
  /** Resolves once no checkpoint runs; rejects with the error of one that failed. */
  settled(): Promise<void>;
  /** Waits for the running checkpoint, then ends the thread. */
  close(): Promise<void>;
  /** How many frames (pages) the WAL held at the last checkpoint, or 0 after a catch-up. */
  walFrames(): number;
  /** Copies every commit so far, so the next transaction writes the WAL from its start again. */
  catchUp(): Promise<void>;
}

/**
 * A checkpoint waits for two fsyncs (the WAL's, then the database file's): on the writer's thread
 * that held back the next transaction, about 4 s of the 15 s a million users took to write (docs/migrating.md,
 * "Import while the server runs"). A second connection on a second thread does it beside the writer,
 * which WAL mode allows. The thread starts with the first request, so a small import never starts one.
 */
export function backgroundCheckpointer(path: string): Checkpointer {
  let worker: Worker | null = null;
  /** Messages the worker has not answered yet: opening the connection, a checkpoint. */
  let pending = 0;
  let failure: Error | null = null;
  let walFrames = 0;
  let copiedAll = false;
  let wake: (() => void) | null = null;
  const start = () => {
    const thread = new Worker(WORKER);
    thread.onmessage = ({ data }: MessageEvent<CheckpointReply>) => {
      if (typeof data === 'object' && 'error' in data) failure = new Error(`checkpointing the WAL: ${data.error}`);
      else if (typeof data === 'object') [walFrames, copiedAll] = [data.walFrames, data.copied === data.walFrames];
      pending--;
      wake?.();
    };
    thread.onerror = (event) => {
      failure = new Error(`checkpointing the WAL: ${event.message}`);
      pending = 0;
      wake?.();
    };
    send(thread, { path });
    return thread;
  };
  const send = (thread: Worker, request: CheckpointRequest) => {
    pending++;
    thread.postMessage(request);
  };
  const settled = async () => {
    while (pending > 0) await new Promise<void>((resolve) => (wake = resolve));
    if (failure !== null) throw failure;
  };
  const request = () => {
    if (failure !== null) throw failure;
    if (pending > 0) return;
    // Messages run in order: the worker opens its connection before the first checkpoint.
    send((worker ??= start()), 'checkpoint');
  };
  return {
    request,
    settled,
    walFrames: () => walFrames,
    async catchUp() {
      await settled();
      request();
      await settled();
      // A reader may hold frames back; then the WAL does not start over, and the count stands.
      if (copiedAll) walFrames = 0;
    },
    async close() {
      try {
        await settled();
      } finally {
        worker?.terminate();
        worker = null;
      }
    },
  };
}

// The thread behind checkpointer.ts: its own connection copies the WAL into the database file.
import { Database } from 'bun:sqlite';

/** From the main thread: the database to open, then one `checkpoint` at a time. */
export type CheckpointRequest = { path: string } | 'checkpoint';
/** To the main thread: after opening, and after each checkpoint with the frames the WAL held and how many of them are copied. */
export type CheckpointReply = 'open' | { walFrames: number; copied: number } | { error: string };

declare const self: Worker;
let db: Database | null = null;

self.onmessage = ({ data }: MessageEvent<CheckpointRequest>) => {
  try {
    if (data === 'checkpoint') {
      const { log, checkpointed } = db!.query('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number; checkpointed: number };
      postMessage({ walFrames: log, copied: checkpointed } satisfies CheckpointReply);
    } else {
      db = new Database(data.path);
      postMessage('open' satisfies CheckpointReply);
    }
  } catch (error) {
    postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies CheckpointReply);
  }
};

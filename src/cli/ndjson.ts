import { chmodSync, closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import type { InputLine } from '../transfer/service';

/** Longer lines are reported, not buffered: a line without newlines cannot fill the memory. */
export const MAX_LINE_BYTES = 64 * 1024;
const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

/**
 * Reads numbered lines from a file descriptor (a file, or 0 for standard input) into one reused
 * buffer, a batch per read. Each line is decoded on its own as strict UTF-8, so a bad byte is
 * reported with its line instead of becoming U+FFFD.
 */
export function ndjsonLines(fd: number): { batches: AsyncGenerator<InputLine[]>; bytesRead: () => number } {
  let bytes = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (number: number, raw: Uint8Array): InputLine => {
    const end = raw.length > 0 && raw[raw.length - 1] === CARRIAGE_RETURN ? raw.length - 1 : raw.length;
    try {
      return { number, text: decoder.decode(raw.subarray(0, end)) };
    } catch {
      return { number, text: '', unreadable: 'not valid UTF-8' };
    }
  };
  const tooLong = (number: number): InputLine => ({ number, text: '', unreadable: `longer than ${MAX_LINE_BYTES} bytes` });

  async function* batches(): AsyncGenerator<InputLine[]> {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    let number = 0;
    let carried: Buffer[] = []; // the start of a line that continues in the next read
    let carriedBytes = 0;
    let overflow = false;
    const collect = collector();
    for (let length = await readSome(fd, buffer); length > 0; length = await readSome(fd, buffer)) {
      bytes += length;
      collect(length);
      const chunk = buffer.subarray(0, length);
      const lines: InputLine[] = [];
      for (let start = 0; ; ) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        overflow ||= carriedBytes + (end - start) > MAX_LINE_BYTES;
        if (newline === -1) {
          if (!overflow && end > start) {
            carried.push(Buffer.from(chunk.subarray(start, end))); // a copy: the buffer is reused
            carriedBytes += end - start;
          }
          break;
        }
        number++;
        if (overflow) lines.push(tooLong(number));
        else lines.push(decode(number, carriedBytes === 0 ? chunk.subarray(start, end) : Buffer.concat([...carried, chunk.subarray(start, end)])));
        [carried, carriedBytes, overflow] = [[], 0, false];
        start = newline + 1;
      }
      if (lines.length > 0) yield lines;
    }
    if (overflow) yield [tooLong(number + 1)];
    else if (carriedBytes > 0) yield [decode(number + 1, Buffer.concat(carried))];
  }
  return { batches: batches(), bytesRead: () => bytes };
}

/**
 * Each read is one batch of lines. A first import writes each batch as it arrives (transfer/service.ts)
 * while the next are read: with 1 MiB a million users peaked at 148 to 150 MiB, with 512 KiB at 136
 * to 142 and no slower (smaller batches, fewer of their strings alive at once).
 */
const READ_BYTES = 512 * 1024;

/**
 * A million lines leave many short-lived strings, and the heap grows well past what is alive before
 * the collector runs on its own; a full collection every 2 MB of text keeps the import's RSS near
 * 118 MiB while it reads (every 4 MB: 138 MiB, about what its writing then needs).
 */
export function collector(): (bytes: number) => void {
  let pending = 0;
  return (bytes) => {
    pending += bytes;
    if (pending < 2 * 1024 * 1024) return;
    Bun.gc(true);
    pending = 0;
  };
}

/** A blocking read is fine here (the command has nothing else to do); a non-blocking pipe says EAGAIN. */
async function readSome(fd: number, buffer: Buffer): Promise<number> {
  for (;;) {
    try {
      return readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await Bun.sleep(5);
    }
  }
}

export interface TextSink {
  write(text: string): Promise<void>;
  /** Makes the output final (durable, in place). */
  finish(): Promise<void>;
  /** Removes a partial output after a failure. */
  abandon(): void;
}

/**
 * Writes into a new file beside `path` (mode 0600 whatever the umask: it holds password hashes)
 * and renames it over `path` once complete, so `path` is never a half-written export.
 */
export function fileSink(path: string): TextSink {
  const partial = join(dirname(path), `.${basename(path)}.partial-${process.pid}`);
  const fd = openSync(partial, 'wx', 0o600);
  const collect = collector();
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    async write(text) {
      const data = Buffer.from(text);
      for (let offset = 0; offset < data.length; ) offset += writeSync(fd, data, offset);
      collect(data.length);
    },
    async finish() {
      chmodSync(partial, 0o600);
      fsyncSync(fd);
      close();
      renameSync(partial, path);
    },
    abandon() {
      close();
      rmSync(partial, { force: true });
    },
  };
}

/** Standard output, waiting when the reader is slower than the export (bounded memory). */
export function stdoutSink(): TextSink {
  const collect = collector();
  return {
    async write(text) {
      collect(text.length);
      if (!process.stdout.write(text)) await once(process.stdout, 'drain');
    },
    async finish() {
      await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    },
    abandon() {},
  };
}

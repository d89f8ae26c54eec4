import { Presets, SingleBar } from 'cli-progress';
import type { ImportProgress } from '../transfer/service';

/** One bar on stderr, only on a terminal: a log file or a pipe gets just the summary line. */
export interface Bar {
  /** `done` of `total`; `position` and `size` drive the percentage and time left when they are not the count (bytes read). */
  update(done: number, position: number, size: number): void;
  stop(): void;
}

const NO_BAR: Bar = { update() {}, stop() {} };
const count = (n: number) => n.toLocaleString('en');

/** Without a known size (standard input) it shows the count and rate only. */
export function progressBar(label: string, unit: string, sized = true): Bar {
  if (!process.stderr.isTTY) return NO_BAR;
  const bar = new SingleBar(
    {
      format: sized ? `${label} {bar} {percentage}% | {done} ${unit} | {rate} ${unit}/s | {eta_formatted} left` : `${label} {done} ${unit} | {rate} ${unit}/s`,
      stream: process.stderr,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    Presets.shades_classic,
  );
  const started = performance.now();
  let running = false;
  return {
    update(done, position, size) {
      const seconds = (performance.now() - started) / 1000;
      const payload = { done: count(done), rate: seconds > 0 ? count(Math.round(done / seconds)) : '0' };
      if (!running) bar.start(Math.max(size, 1), position, payload);
      else {
        bar.setTotal(Math.max(size, 1));
        bar.update(position, payload);
      }
      running = true;
    },
    stop() {
      if (running) bar.stop();
      running = false;
    },
  };
}

/** Reading (and a load that writes as it reads) is measured in bytes of the file when its size is known, writing in users. */
export function importProgress(bytesRead: () => number, fileSize: number | null): ImportProgress {
  const reading = progressBar('checking', 'lines', fileSize !== null);
  let loading: Bar | null = null;
  let writing: Bar | null = null;
  const update = (bar: Bar, lines: number) => bar.update(lines, fileSize === null ? lines : bytesRead(), fileSize ?? lines);
  return {
    reading: (lines) => update(reading, lines),
    loading: (lines) => update((loading ??= progressBar('importing', 'lines', fileSize !== null)), lines),
    writing(written, total) {
      reading.stop();
      writing ??= progressBar('importing', 'users');
      writing.update(written, written, total);
    },
    end() {
      reading.stop();
      loading?.stop();
      writing?.stop();
    },
  };
}

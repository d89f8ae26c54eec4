import { describe, expect, test } from 'bun:test';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { AccessLine, createLineWriter, formatLine, hundredths, type LineSink } from '../src/http/log';
import { cleanEnv, SOURCE_COMMAND, tempDirsOfThisFile } from './support/server-process';

/** A sink whose writes complete at once while `open`, and otherwise only once drained, like a pipe nobody reads. */
function fakeSink() {
  const written: string[] = [];
  const unfinished: (() => void)[] = [];
  const sink = {
    open: true,
    written,
    write(text: string, done: () => void = () => {}) {
      written.push(text);
      if (sink.open) done();
      else unfinished.push(done);
    },
    /** The reader caught up. */
    drain() {
      sink.open = true;
      for (const done of unfinished.splice(0)) done();
    },
  };
  return sink satisfies LineSink;
}
const turn = () => new Promise((resolve) => setImmediate(resolve));
const linesOf = (written: string[]) => written.join('').split('\n').filter((line) => line !== '');

describe('log lines', () => {
  test('a line is the time first, then the fields, as JSON', () => {
    const line = formatLine({ request_id: 'a-1', method: 'GET', path: '/users/"x"', status: 200, ms: 0.12 });
    const parsed = JSON.parse(line);
    expect(Object.keys(parsed)).toEqual(['time', 'request_id', 'method', 'path', 'status', 'ms']);
    expect(parsed.path).toBe('/users/"x"');
    expect(new Date(parsed.time).toISOString()).toBe(parsed.time);
    expect(line.endsWith('}\n')).toBe(true);
    expect(JSON.parse(formatLine({}))).toEqual({ time: expect.any(String) });
  });

  test('an access line is written as JSON.stringify writes its fields, odd methods and paths escaped', () => {
    const cases: [string, string, string, number, number, string | null][] = [
      ['abc-1', 'GET', '/users/abc', 200, 0.07, 'default'],
      ['abc-z', 'POST', '/users/"x"\\y\u0001é', 400, 12.5, 'support_tool-2'],
      ['abc-10', 'PROPFIND', '/', 401, 0, null],
      ['abc-11', 'G"ET', '/health', 404, 1234.56, null],
    ];
    for (const fields of cases) {
      const line = formatLine(new AccessLine(...fields));
      const [request_id, method, path, status, ms, key] = fields;
      const { time, ...rest } = JSON.parse(line);
      expect(new Date(time).toISOString()).toBe(time);
      expect(line).toBe(`{"time":"${time}",${JSON.stringify({ request_id, method, path, status, ms, key }).slice(1)}\n`);
      expect(rest).toEqual({ request_id, method, path, status, ms, key });
    }
  });

  test('hundredths writes the digits JSON writes for every number of hundredths', () => {
    for (let total = 0; total <= 1_000_000; total++) {
      const ms = Math.round((total / 100) * 100) / 100;
      if (hundredths(ms) !== JSON.stringify(ms)) expect(`${total}: ${hundredths(ms)}`).toBe(`${total}: ${JSON.stringify(ms)}`);
    }
    expect(hundredths(Math.round(3.14159 * 100) / 100)).toBe('3.14');
  });

  test("the lines of one turn leave in one write, after the turn", async () => {
    const sink = fakeSink();
    const writer = createLineWriter(sink, { maxUnwritten: 0, maxPending: 1000, flushAt: 10_000, flushAfterMs: 0 });
    for (let i = 0; i < 5; i++) writer.write(`line ${i}\n`);
    expect(sink.written).toEqual([]);
    await turn();
    expect(sink.written).toEqual(['line 0\nline 1\nline 2\nline 3\nline 4\n']);
  });

  test('with flushAfterMs, the lines of that time leave in one write; flushAt characters waiting leave at once', async () => {
    const sink = fakeSink();
    const writer = createLineWriter(sink, { maxUnwritten: 0, maxPending: 1000, flushAt: 20, flushAfterMs: 30 });
    writer.write('line 0\n');
    writer.write('line 1\n');
    await turn();
    await Bun.sleep(5);
    expect(sink.written).toEqual([]);
    writer.write('line 2\n'); // 21 characters: at once
    expect(sink.written).toEqual(['line 0\nline 1\nline 2\n']);
    writer.write('line 3\n');
    await Bun.sleep(60);
    expect(sink.written).toEqual(['line 0\nline 1\nline 2\n', 'line 3\n']);
  });

  test('while the sink is backed up lines wait for its drain, and past the bound they are counted, not kept', async () => {
    const sink = fakeSink();
    const writer = createLineWriter(sink, { maxUnwritten: 0, maxPending: 100, flushAt: 10_000, flushAfterMs: 0 });
    sink.open = false;
    writer.write('first\n');
    await turn();
    expect(sink.written).toEqual(['first\n']); // accepted, but the sink asked to wait
    for (let i = 0; i < 50; i++) writer.write(`waiting line ${String(i).padStart(2, '0')}\n`);
    await turn();
    expect(sink.written.length).toBe(1); // nothing more while backed up
    sink.drain();
    const lines = linesOf(sink.written);
    // 100 characters held: 7 lines of 16, the rest dropped and reported.
    expect(lines.slice(1, 8)).toEqual(Array.from({ length: 7 }, (_, i) => `waiting line 0${i}`));
    expect(lines.length).toBe(9);
    expect(JSON.parse(lines[8]!)).toMatchObject({ level: 'warn', message: '43 log lines dropped: stdout was not read fast enough' });
  });

  test('the sink may hold maxUnwritten characters not yet written before lines wait', async () => {
    const sink = fakeSink();
    const writer = createLineWriter(sink, { maxUnwritten: 10, maxPending: 1000, flushAt: 10_000, flushAfterMs: 0 });
    sink.open = false;
    for (const line of ['aaaa\n', 'bbbb\n', 'cccc\n', 'dddd\n']) {
      writer.write(line);
      await turn();
    }
    // 5, then 10 characters unwritten: both go on; the third write passes 10, so the fourth line waits.
    expect(sink.written).toEqual(['aaaa\n', 'bbbb\n', 'cccc\n']);
    sink.drain();
    expect(sink.written).toEqual(['aaaa\n', 'bbbb\n', 'cccc\n', 'dddd\n']);
  });

  test('a write that throws (EPIPE) is not waited for by drain()', async () => {
    const written: string[] = [];
    let broken = true;
    const sink = {
      write(text: string, done: () => void = () => {}) {
        if (broken) {
          broken = false;
          throw new Error('EPIPE');
        }
        written.push(text);
        done();
      },
    };
    const writer = createLineWriter(sink, { maxUnwritten: 0, maxPending: 1000, flushAt: 10_000, flushAfterMs: 0 });
    writer.write('lost\n');
    expect(() => writer.flush()).toThrow('EPIPE');
    writer.write('kept\n');
    await writer.drain();
    expect(written).toEqual(['kept\n']);
  });

  test('drain() resolves once every line is written, also after waiting for a slow sink', async () => {
    const sink = fakeSink();
    const writer = createLineWriter(sink, { maxUnwritten: 0, maxPending: 1000, flushAt: 10_000, flushAfterMs: 0 });
    sink.open = false;
    writer.write('a\n');
    await turn();
    writer.write('b\n');
    let drained = false;
    const done = writer.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    sink.drain();
    await done;
    expect(linesOf(sink.written)).toEqual(['a', 'b']);
  });
});

describe('the access log of the real server', () => {
  const newDir = tempDirsOfThisFile();

  test('no line is lost on SIGTERM while stdout is a pipe nobody reads', async () => {
    const dir = newDir();
    // A FIFO opened for reading and writing here: the server's stdout fills up and stays full until we read.
    const fifo = join(dir, 'stdout');
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0);
    const unread = openSync(fifo, constants.O_RDWR);
    const port = freePort();
    const secret = 'access-log-secret-0123456789';
    const proc = Bun.spawn([...SOURCE_COMMAND, 'serve', '--port', String(port), '--dir', join(dir, 'data'), '--secret', secret, '--pwned-check', 'off'], {
      env: cleanEnv(),
      stdin: 'ignore',
      stdout: unread,
      stderr: 'pipe',
    });
    const base = `http://127.0.0.1:${port}`;
    let healthChecks = 0;
    for (;;) {
      healthChecks++;
      if ((await fetch(`${base}/health`).then((r) => r.status, () => 0)) === 200) break;
      await Bun.sleep(50);
    }
    // Each access line is about 130 bytes: 3,000 of them are far more than a pipe holds.
    const REQUESTS = 3_000;
    for (let sent = 0; sent < REQUESTS; sent += 50) {
      await Promise.all(Array.from({ length: 50 }, () => fetch(`${base}/users/nobody`, { headers: { authorization: secret } }).then((r) => r.arrayBuffer())));
    }
    proc.kill('SIGTERM');
    // Only now does someone read: the server must wait for that before it exits.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const chunks: Buffer[] = [];
    let exited = false;
    void proc.exited.then(() => (exited = true));
    for (;;) {
      const buffer = Buffer.alloc(65536);
      let read = 0;
      try {
        read = readSync(reader, buffer);
      } catch (error) {
        if ((error as { code?: string }).code !== 'EAGAIN') throw error;
      }
      if (read > 0) chunks.push(buffer.subarray(0, read));
      else if (exited) break;
      else await Bun.sleep(5);
    }
    closeSync(reader);
    closeSync(unread);
    expect(await proc.exited).toBe(0);
    const access = Buffer.concat(chunks).toString().split('\n').filter((line) => line.includes('"method"')).map((line) => JSON.parse(line));
    expect(access.filter((line) => line.path === '/users/nobody' && line.status === 404).length).toBe(REQUESTS);
    // Health checks that reached the server are logged too (the ones before it listened are not).
    expect(access.filter((line) => line.path === '/health').length).toBeGreaterThanOrEqual(1);
    expect(access.filter((line) => line.path === '/health').length).toBeLessThanOrEqual(healthChecks);
  }, 60_000);
});

function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

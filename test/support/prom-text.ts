/** One sample line of the Prometheus text format: `name{label="value",...} number`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition (comments skipped); label values unescaped. */
export function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = LINE.exec(line);
      if (match === null) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = JSON.parse(`"${value}"`);
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

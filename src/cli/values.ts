/** A bad flag or value: main prints the message on one line and exits with code 2. */
export class UsageError extends Error {}

/** An absolute URL with one of `schemes`. `secret` URLs (they may carry a password) are not echoed. */
export function parseUrl(flag: string, value: string, schemes = ['http', 'https'], secret = false): string {
  const scheme = /^([a-z]+):\/\/[^\s]+$/.exec(value)?.[1];
  if (scheme === undefined || !schemes.includes(scheme) || !URL.canParse(value)) {
    const shown = secret ? '' : ` '${value}'`;
    throw new UsageError(`invalid --${flag}${shown}: expected a ${schemes.join(' or ')} URL`);
  }
  return value;
}

export function nonEmpty(flag: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  return value;
}

/** One structured line per event. Callers pass only fields that are safe to keep: never secrets, passwords or codes. */
export type Logger = (fields: Record<string, unknown>) => void;

export const stdoutLogger: Logger = (fields) => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
};

export const silentLogger: Logger = () => {};

/** Request ids travel from the outer handler to Elysia's error hook through the Request object itself. */
const requestIds = new WeakMap<Request, string>();
export const setRequestId = (request: Request, id: string) => requestIds.set(request, id);
export const requestIdOf = (request: Request): string => requestIds.get(request) ?? '-';

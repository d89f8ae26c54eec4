type Env = Record<string, string | undefined>;

/**
 * Started through npm (`npx gatehouse serve`, `npm start`), the server runs as npm → `sh -c` → bun,
 * and npm hands a SIGTERM on to that shell only: the shell dies and the server would go on alone, so
 * `kill $!` after `npx gatehouse serve &` would not stop it. Under npm the server therefore stops,
 * as on SIGTERM, once the process that started it is gone (its parent changes).
 */
export function stopWithLauncher(env: Env, stop: () => void, everyMs = 200): void {
  if (env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, everyMs);
  timer.unref();
}

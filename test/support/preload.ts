import { afterAll, setDefaultTimeout } from 'bun:test';
import { closeSharedEngines } from './setups';

// Argon2id hashing and real server processes make some tests slower than bun's 5 s default. Bun
// (1.4.5) applies this to the first test file only; test/run.ts also passes `--timeout 30000`, and a
// plain `npx bun test` of several files needs the same flag.
setDefaultTimeout(30_000);

// The PostgreSQL cluster and redis-server of the PostgreSQL set-ups, once every file has run.
afterAll(closeSharedEngines, 30_000);

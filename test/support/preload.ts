import { afterAll, setDefaultTimeout } from 'bun:test';
import { closeSharedEngines } from './setups';

// Argon2id hashing and real server processes make some tests slower than bun's 5 s default.
setDefaultTimeout(30_000);

// The PostgreSQL cluster and redis-server of the PostgreSQL set-ups, once every file has run.
afterAll(closeSharedEngines, 30_000);

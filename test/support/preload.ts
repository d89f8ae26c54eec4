import { setDefaultTimeout } from 'bun:test';

// Argon2id hashing and real server processes make some tests slower than bun's 5 s default.
setDefaultTimeout(30_000);

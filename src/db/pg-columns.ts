import { bigint } from 'drizzle-orm/pg-core';

// Times stay Unix seconds, as bigint so they outlive 2038; mode 'number' because Bun.SQL returns int8
// as a string otherwise.
export const unixSeconds = (name: string) => bigint(name, { mode: 'number' });

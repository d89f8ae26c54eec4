// A separate process that applies the PostgreSQL migrations to argv[2], like one instance starting up.
import { migratePostgres } from '../../src/db/pg-client';

await migratePostgres(process.argv[2]!);

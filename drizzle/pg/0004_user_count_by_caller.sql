-- A statement that inserts or deletes users locks the "counters" row until its transaction ends, and
-- every other user creation waits for that lock. A bulk import (gatehouse import) writes each chunk
-- of users in a transaction of its own and would hold the lock for the whole chunk; instead it sets
-- gatehouse.user_count to 'by_caller' for its transaction and adds its count itself, once, right
-- before its commit (src/transfer/store.pg.ts). Every other writer leaves the setting unset.
CREATE OR REPLACE FUNCTION "users_count_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE added bigint;
BEGIN
	IF current_setting('gatehouse.user_count', true) = 'by_caller' THEN
		RETURN NULL;
	END IF;
	SELECT COUNT(*) INTO added FROM "inserted_users";
	IF added > 0 THEN
		UPDATE "counters" SET "value" = "value" + added WHERE "name" = 'users';
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "users_count_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE removed bigint;
BEGIN
	IF current_setting('gatehouse.user_count', true) = 'by_caller' THEN
		RETURN NULL;
	END IF;
	SELECT COUNT(*) INTO removed FROM "deleted_users";
	IF removed > 0 THEN
		UPDATE "counters" SET "value" = "value" - removed WHERE "name" = 'users';
	END IF;
	RETURN NULL;
END;
$$;

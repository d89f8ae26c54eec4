-- Keeps the number of users in "counters" so GET /users never counts a million rows per request.
-- Statement-level triggers with transition tables: a bulk import updates the counter once, not per
-- row, and a statement that changes no user does not lock the counter row.
INSERT INTO "counters" ("name", "value") SELECT 'users', COUNT(*) FROM "users";
--> statement-breakpoint
CREATE FUNCTION "users_count_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE added bigint;
BEGIN
	SELECT COUNT(*) INTO added FROM "inserted_users";
	IF added > 0 THEN
		UPDATE "counters" SET "value" = "value" + added WHERE "name" = 'users';
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION "users_count_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE removed bigint;
BEGIN
	SELECT COUNT(*) INTO removed FROM "deleted_users";
	IF removed > 0 THEN
		UPDATE "counters" SET "value" = "value" - removed WHERE "name" = 'users';
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "users_count_insert" AFTER INSERT ON "users"
	REFERENCING NEW TABLE AS "inserted_users" FOR EACH STATEMENT EXECUTE FUNCTION "users_count_inserted"();
--> statement-breakpoint
CREATE TRIGGER "users_count_delete" AFTER DELETE ON "users"
	REFERENCING OLD TABLE AS "deleted_users" FOR EACH STATEMENT EXECUTE FUNCTION "users_count_deleted"();

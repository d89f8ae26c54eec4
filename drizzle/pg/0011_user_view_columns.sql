ALTER TABLE "users" ADD COLUMN "registered_totp" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "passkey_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The user view's registered_totp and passkey_count, kept on the user row so GET /users/{id} reads one
-- row. Triggers write them in the transaction of the statement that adds or removes the credential,
-- whichever code path it comes from (a feature, a revocation, an import). Increments, not counts: a
-- count in READ COMMITTED would read the statement's snapshot and lose a parallel change, while an
-- UPDATE re-reads the row it waited for. Every writer of a user's credentials holds the user's row
-- lock already (the lock order), so the trigger's UPDATE takes no lock the transaction lacks; a
-- user deleted in the same statement (a cascade) is simply not found.
UPDATE "users" SET
	"registered_totp" = EXISTS (SELECT 1 FROM "totp_credentials" t WHERE t."user_id" = "users"."id"),
	"passkey_count" = (SELECT count(*) FROM "passkeys" p WHERE p."user_id" = "users"."id");
--> statement-breakpoint
CREATE FUNCTION "users_view_totp"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		UPDATE "users" SET "registered_totp" = true WHERE "id" = NEW."user_id";
	ELSE
		UPDATE "users" SET "registered_totp" = false WHERE "id" = OLD."user_id";
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION "users_view_passkeys"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		UPDATE "users" SET "passkey_count" = "passkey_count" + 1 WHERE "id" = NEW."user_id";
	ELSE
		UPDATE "users" SET "passkey_count" = "passkey_count" - 1 WHERE "id" = OLD."user_id";
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "users_view_totp" AFTER INSERT OR DELETE ON "totp_credentials"
	FOR EACH ROW EXECUTE FUNCTION "users_view_totp"();
--> statement-breakpoint
CREATE TRIGGER "users_view_passkeys" AFTER INSERT OR DELETE ON "passkeys"
	FOR EACH ROW EXECUTE FUNCTION "users_view_passkeys"();

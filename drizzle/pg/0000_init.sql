CREATE TABLE "counters" (
	"name" text PRIMARY KEY NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_update_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"email" text NOT NULL,
	"code" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_verification_requests" (
	"user_id" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"code" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "password_reset_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"code_hash" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "totp_credentials" (
	"user_id" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"key" text NOT NULL,
	"last_used_step" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"email" text,
	"email_verified" boolean DEFAULT false NOT NULL,
	"password_hash" text NOT NULL,
	"recovery_code_hash" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "email_update_requests" ADD CONSTRAINT "email_update_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_verification_requests" ADD CONSTRAINT "email_verification_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "password_reset_requests" ADD CONSTRAINT "password_reset_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "totp_credentials" ADD CONSTRAINT "totp_credentials_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "email_update_requests_user" ON "email_update_requests" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "email_update_requests_email" ON "email_update_requests" USING btree ("email");--> statement-breakpoint
CREATE INDEX "email_update_requests_expires" ON "email_update_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "email_verification_requests_expires" ON "email_verification_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "password_reset_requests_user" ON "password_reset_requests" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "password_reset_requests_expires" ON "password_reset_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_unique" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "users_created_at_id" ON "users" USING btree ("created_at","id");
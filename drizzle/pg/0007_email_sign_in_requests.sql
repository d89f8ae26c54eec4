CREATE TABLE "email_sign_in_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"email" text NOT NULL,
	"code_hash" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "email_sign_in_requests" ADD CONSTRAINT "email_sign_in_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "email_sign_in_requests_user" ON "email_sign_in_requests" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "email_sign_in_requests_expires" ON "email_sign_in_requests" USING btree ("expires_at");
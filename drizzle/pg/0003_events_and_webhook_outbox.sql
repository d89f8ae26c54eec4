CREATE TABLE "events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"time" bigint NOT NULL,
	"type" text NOT NULL,
	"user_id" text,
	"client_ip" text
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at_ms" bigint DEFAULT 0 NOT NULL,
	"lease_until_ms" bigint DEFAULT 0 NOT NULL,
	"lease_token" text
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_user" ON "events" USING btree ("user_id","id");--> statement-breakpoint
CREATE INDEX "events_type" ON "events" USING btree ("type","id");--> statement-breakpoint
CREATE INDEX "events_time" ON "events" USING btree ("time");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("state","next_attempt_at_ms");
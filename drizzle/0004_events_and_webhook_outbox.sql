CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`time` integer NOT NULL,
	`type` text NOT NULL,
	`user_id` text,
	`client_ip` text
);
--> statement-breakpoint
CREATE INDEX `events_user` ON `events` (`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_type` ON `events` (`type`,`id`);--> statement-breakpoint
CREATE INDEX `events_time` ON `events` (`time`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`event_id` integer PRIMARY KEY NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at_ms` integer DEFAULT 0 NOT NULL,
	`lease_until_ms` integer DEFAULT 0 NOT NULL,
	`lease_token` text,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`state`,`next_attempt_at_ms`);
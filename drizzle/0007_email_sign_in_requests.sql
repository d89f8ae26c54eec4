CREATE TABLE `email_sign_in_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`email` text NOT NULL,
	`code_hash` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `email_sign_in_requests_user` ON `email_sign_in_requests` (`user_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `email_sign_in_requests_expires` ON `email_sign_in_requests` (`expires_at`);
ALTER TABLE `users` ADD `registered_totp` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `passkey_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The user view's registered_totp and passkey_count, kept on the user row so GET /users/{id} reads one
-- row. Triggers write them in the transaction of the statement that adds or removes the credential,
-- whichever code path it comes from (a feature, a revocation, an import, a cascade). Counted again
-- rather than incremented: an INSERT OR REPLACE deletes without firing the delete trigger.
UPDATE `users` SET
	`registered_totp` = EXISTS (SELECT 1 FROM `totp_credentials` t WHERE t.`user_id` = `users`.`id`),
	`passkey_count` = (SELECT count(*) FROM `passkeys` p WHERE p.`user_id` = `users`.`id`);
--> statement-breakpoint
CREATE TRIGGER `users_view_totp_insert` AFTER INSERT ON `totp_credentials` BEGIN
	UPDATE `users` SET `registered_totp` = 1 WHERE `id` = NEW.`user_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `users_view_totp_delete` AFTER DELETE ON `totp_credentials` BEGIN
	UPDATE `users` SET `registered_totp` = EXISTS (SELECT 1 FROM `totp_credentials` t WHERE t.`user_id` = OLD.`user_id`) WHERE `id` = OLD.`user_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `users_view_passkey_insert` AFTER INSERT ON `passkeys` BEGIN
	UPDATE `users` SET `passkey_count` = (SELECT count(*) FROM `passkeys` p WHERE p.`user_id` = NEW.`user_id`) WHERE `id` = NEW.`user_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `users_view_passkey_delete` AFTER DELETE ON `passkeys` BEGIN
	UPDATE `users` SET `passkey_count` = (SELECT count(*) FROM `passkeys` p WHERE p.`user_id` = OLD.`user_id`) WHERE `id` = OLD.`user_id`;
END;

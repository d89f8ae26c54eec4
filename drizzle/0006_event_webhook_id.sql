ALTER TABLE `events` ADD `webhook_id` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `events` SET `webhook_id` = 'evt_' || lower(hex(randomblob(16)));--> statement-breakpoint
CREATE TRIGGER `events_webhook_id` AFTER INSERT ON `events` WHEN NEW.`webhook_id` = '' BEGIN
  UPDATE `events` SET `webhook_id` = 'evt_' || lower(hex(randomblob(16))) WHERE `id` = NEW.`id`;
END;
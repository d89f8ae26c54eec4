-- Keeps the number of users in `counters` so GET /users never counts a million rows per request.
INSERT INTO `counters` (`name`, `value`) SELECT 'users', COUNT(*) FROM `users`;
--> statement-breakpoint
CREATE TRIGGER `users_count_insert` AFTER INSERT ON `users` BEGIN
	UPDATE `counters` SET `value` = `value` + 1 WHERE `name` = 'users';
END;
--> statement-breakpoint
CREATE TRIGGER `users_count_delete` AFTER DELETE ON `users` BEGIN
	UPDATE `counters` SET `value` = `value` - 1 WHERE `name` = 'users';
END;

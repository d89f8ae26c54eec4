-- Users imported without a password hash (API.md §19) hold this marker until their password is taken
-- over; the partial index lets /metrics count them without reading the users table.
CREATE INDEX `users_awaiting_password_migration` ON `users` (`id`) WHERE password_hash = '!awaiting-password-migration';

export const SECRET = 'test-secret-0123456789';
export const STRONG_PASSWORD = 'gatehouse test password 1';
export const WEAK_PASSWORD = 'password123';

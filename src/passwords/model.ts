import { t } from 'elysia';
import { ClientIp, Email, Password, passwordField } from '../http/fields';

export const TAG = 'Passwords';

export const AuthenticateBody = t.Object({ email: Email, password: Password, client_ip: ClientIp });
export const VerifyPasswordBody = t.Object({ password: Password, client_ip: ClientIp });
export const UpdatePasswordBody = t.Object({
  password: passwordField('The current password'),
  new_password: passwordField('The new password, strength-checked'),
  client_ip: ClientIp,
});

import { t } from 'elysia';
import { VERSION } from '../version';

export const TAG = 'Service';

export const About = t.Object({ name: t.String({ examples: ['gatehouse'] }), version: t.String({ examples: [VERSION] }) });
export type AboutView = typeof About.static;

export const Health = t.Object({ status: t.Literal('ok') });
export type HealthView = typeof Health.static;

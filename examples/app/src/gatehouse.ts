/**
 * The Gatehouse client. In your own app: `npm install @gatehouse/client` (or the tarball that
 * `cd client && npm pack` makes) and import from '@gatehouse/client'; here it comes from the
 * repository's own client/ so the example always runs against the client of this build.
 */
export { createGatehouseClient, type GatehouseClient, type GatehouseError } from '../../../client/src/index';

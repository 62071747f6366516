/** Authentication in the server: the plugin on every operation, and how a server starts keyed or open. */
export * from '../../auth/index.js';
export { authorizationOf, useAuth } from './plugin.js';

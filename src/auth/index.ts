/**
 * Authentication and tenants: API keys, the caller of each operation, open mode, and the event
 * hub as one tenant sees it. The yoga plugin that applies them to every operation is in
 * src/server/auth.
 */
export {
  type Authenticator,
  type AuthMode,
  createAuthenticator,
  openAuthenticator,
} from './authenticator.js';
export { scopeHub } from './hub.js';
export {
  type ApiKeyInfo,
  ApiKeyInputError,
  type ApiKeyStore,
  apiKeys,
  type CreatedApiKey,
  KEY_PREFIX,
  parseScopes,
  TENANT_NAME,
} from './keys.js';
export * from './types.js';

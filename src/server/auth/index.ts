/** Authentication and tenants: API keys, the caller of each operation, open mode. */
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
export { authorizationOf, useAuth } from './plugin.js';

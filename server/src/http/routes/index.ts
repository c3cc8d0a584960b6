/** The routes the HTTP door owns besides the built-in system routes (health, info, openapi). */
import type { ApiKeys } from '../../auth/api-keys';
import type { Sessions } from '../../auth/sessions';
import type { RouteDef } from '../route';
import { adminKeyRoutes } from './admin-keys';
import { sessionRoutes } from './session';

export { adminKeyRoutes } from './admin-keys';
export { adminStoreRoutes } from './admin-store';
export { sessionRoutes } from './session';
export { systemRoutes } from './system';
export { tenantRoutes } from './tenants';

/** Sessions and key management. */
export function authRoutes(deps: { keys: ApiKeys; sessions: Sessions }): RouteDef[] {
  return [...sessionRoutes(deps), ...adminKeyRoutes(deps)];
}

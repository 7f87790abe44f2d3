import type { WhoamiPlanView } from './model'

/**
 * The members module's state: slots later modules fill. `planOf` gives whoami the Tenant's plan; a billing module
 * sets it (members never reads billing's tables), and whoami answers `plan: null` without one.
 */
export interface MembersState {
  planOf: ((tenantId: number) => Promise<WhoamiPlanView>) | null
}

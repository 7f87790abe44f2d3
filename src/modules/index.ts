import { collaborationModule } from './collaboration'
import { commerceModule } from './commerce'
import type { Module } from '../kernel/module'
import { adminModule } from './admin'
import { aiModule } from './ai'
import { analyticsModule } from './analytics'
import { assetsModule } from './assets'
import { authModule } from './auth'
import { backupModule } from './backup'
import { billingModule } from './billing'
import { datasourcesModule } from './datasources'
import { graphqlModule } from './graphql'
import { membersModule } from './members'
import { onboardingModule } from './onboarding'
import { pluginsModule } from './plugins'
import { previewModule } from './preview'
import { overlayModule } from './overlay'
import { paymentsModule } from './payments'
import { healthModule } from './health'
import { formsModule } from './forms'
import { galleriesModule } from './galleries'
import { eventsModule } from './events'
import { searchModule } from './search'
import { segmentsModule } from './segments'
import { spacesModule } from './spaces'
import { storiesModule } from './stories'
import { subscribersModule } from './subscribers'
import { systemModule } from './system'
import { webhooksModule } from './webhooks'

/**
 * Every module, once. Order matters in three ways: a module may `use()` only modules above it; read steps run in
 * this order (personalisation picks the content before datasource markers are resolved in it); and rate-limit rows
 * are matched in this order (module rows before the kernel's defaults).
 */
export const MODULES: Module[] = [
  systemModule,
  authModule,
  spacesModule,
  membersModule,
  storiesModule,
  segmentsModule,
  datasourcesModule,
  analyticsModule,
  searchModule,
  webhooksModule,
  pluginsModule,
  collaborationModule,
  graphqlModule,
  subscribersModule,
  formsModule,
  eventsModule,
  onboardingModule,
  assetsModule,
  previewModule,
  galleriesModule,
  overlayModule,
  aiModule,
  billingModule,
  paymentsModule,
  commerceModule,
  healthModule,
  backupModule,
  adminModule,
]

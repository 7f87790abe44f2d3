import { getRouteApi } from '@tanstack/react-router'
import { ResourceScreen } from '../../components/resource/resource-screen'

const route = getRouteApi('/app/spaces/$space/webhooks')

/** Webhooks: generated from the routes' `x-admin` (list, event checklist, secret once, rotate, ping, delivery log). */
export function WebhooksScreen() {
  const { space } = route.useParams()
  return <ResourceScreen space={space} resource="webhooks" />
}

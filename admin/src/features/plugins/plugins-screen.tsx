import { getRouteApi } from '@tanstack/react-router'
import { ResourceScreen } from '../../components/resource/resource-screen'

const route = getRouteApi('/app/spaces/$space/plugins')

/** Plugins: generated from the routes' `x-admin` (call order, reorder, hooks, on/off, secret once, call log). */
export function PluginsScreen() {
  const { space } = route.useParams()
  return <ResourceScreen space={space} resource="plugins" />
}

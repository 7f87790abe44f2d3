import { getRouteApi } from '@tanstack/react-router'
import { StoryEditor } from '../features/stories/editor/story-editor'

const route = getRouteApi('/app/spaces/$space/stories/$uuid')

/** The Story editor's route: the Space, the Story and the locale on screen (`?lang`); the editor is features/stories/editor/. */
export function StoryEditorScreen() {
  const { space, uuid } = route.useParams()
  const { lang } = route.useSearch()
  const navigate = route.useNavigate()
  return <StoryEditor space={space} uuid={uuid} lang={lang} onLang={(l) => navigate({ search: { lang: l } })} />
}

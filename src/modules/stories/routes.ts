import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import type { Guards } from '../../kernel/plugin'
import { createComponent, deleteComponent, getComponent, listComponents, updateComponent } from './components'
import {
  BulkBody,
  ChildrenQuery,
  ComponentParams,
  CreateComponentBody,
  CreateStoryBody,
  LangQuery,
  ListStoriesQuery,
  PageQuery,
  SpaceParams,
  StoryParams,
  TreeQuery,
  UpdateComponentBody,
  UpdateStoryBody,
  VersionParams,
} from './model'
import { MAX_STORY_DEPTH } from './paths'
import {
  archiveStory,
  bulkStories,
  createStory,
  deleteStory,
  getStory,
  getVersion,
  listStories,
  listVersions,
  publishStory,
  restoreVersion,
  storyChildren,
  storyTree,
  unpublishStory,
  updateStory,
} from './service'

/** Management API of Stories: editors write, viewers read. */
export function storyRoutes(deps: Deps, guards: Guards) {
  return (
    new Elysia({ prefix: '/spaces/:space/stories', tags: ['Stories'] })
      .use(guards)
      .get('/', async ({ access, query }) => listStories(deps, access, query), {
        params: SpaceParams,
        query: ListStoriesQuery,
        spaceRole: 'viewer',
        detail: { summary: 'List Stories in full_path order (paginated, without content)' },
      })
      .post(
        '/',
        async ({ access, body, set }) => {
          set.status = 201
          return { data: await createStory(deps, access, body) }
        },
        { params: SpaceParams, body: CreateStoryBody, spaceRole: 'editor' },
      )
      // Static segments before `/:uuid` so they are never taken for a uuid.
      .get('/tree', async ({ access, query }) => storyTree(deps, access, { ...query, depth: query.depth ?? MAX_STORY_DEPTH }), {
        params: SpaceParams,
        query: TreeQuery,
        spaceRole: 'viewer',
        detail: { summary: 'The whole Story tree, paginated by root Story' },
      })
      .post('/bulk', async ({ access, body }) => bulkStories(deps, access, body), {
        params: SpaceParams,
        body: BulkBody,
        spaceRole: 'editor',
        detail: { summary: 'Publish, unpublish, archive, delete or move many Stories; per-item results' },
      })
      .get('/:uuid', async ({ access, params, query }) => ({ data: await getStory(deps, access, params.uuid, query.lang) }), {
        params: StoryParams,
        query: LangQuery,
        spaceRole: 'viewer',
      })
      .put('/:uuid', async ({ access, params, body }) => ({ data: await updateStory(deps, access, params.uuid, body) }), {
        params: StoryParams,
        body: UpdateStoryBody,
        spaceRole: 'editor',
      })
      .delete(
        '/:uuid',
        async ({ access, params, set }) => {
          await deleteStory(deps, access, params.uuid)
          set.status = 204
        },
        { params: StoryParams, spaceRole: 'editor' },
      )
      .post('/:uuid/publish', async ({ access, params }) => ({ data: await publishStory(deps, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
      })
      .post('/:uuid/unpublish', async ({ access, params }) => ({ data: await unpublishStory(deps, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
      })
      .post('/:uuid/archive', async ({ access, params }) => ({ data: await archiveStory(deps, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
      })
      .get('/:uuid/versions', async ({ access, params, query }) => listVersions(deps, access, params.uuid, query), {
        params: StoryParams,
        query: PageQuery,
        spaceRole: 'viewer',
      })
      .get(
        '/:uuid/versions/:version_no',
        async ({ access, params }) => ({ data: await getVersion(deps, access, params.uuid, params.version_no) }),
        { params: VersionParams, spaceRole: 'viewer' },
      )
      .post(
        '/:uuid/versions/:version_no/restore',
        async ({ access, params }) => ({ data: await restoreVersion(deps, access, params.uuid, params.version_no) }),
        { params: VersionParams, spaceRole: 'editor' },
      )
      .get('/:uuid/children', async ({ access, params, query }) => storyChildren(deps, access, params.uuid, query.depth ?? 1), {
        params: StoryParams,
        query: ChildrenQuery,
        spaceRole: 'viewer',
      })
  )
}

/** Component blueprints: editors write, viewers read. */
export function componentRoutes(deps: Deps, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/components', tags: ['Components'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listComponents(deps, access) }), { params: SpaceParams, spaceRole: 'viewer' })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createComponent(deps, access, body) }
      },
      { params: SpaceParams, body: CreateComponentBody, spaceRole: 'editor' },
    )
    .get('/:name', async ({ access, params }) => ({ data: await getComponent(deps, access, params.name) }), {
      params: ComponentParams,
      spaceRole: 'viewer',
    })
    .put('/:name', async ({ access, params, body }) => ({ data: await updateComponent(deps, access, params.name, body) }), {
      params: ComponentParams,
      body: UpdateComponentBody,
      spaceRole: 'editor',
    })
    .delete(
      '/:name',
      async ({ access, params, set }) => {
        await deleteComponent(deps, access, params.name)
        set.status = 204
      },
      { params: ComponentParams, spaceRole: 'editor' },
    )
}

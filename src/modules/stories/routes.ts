import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import { componentUsage, createComponent, deleteComponent, getComponent, listComponents, updateComponent } from './components'
import {
  BulkBody,
  BulkResponseModel,
  ChildrenModel,
  ChildrenQuery,
  ComponentModel,
  ComponentUsageModel,
  ComponentParams,
  CreateComponentBody,
  CreateStoryBody,
  LangQuery,
  ListStoriesQuery,
  VersionsQuery,
  StoryListModel,
  StoryModel,
  StoryParams,
  TreeModel,
  TreeQuery,
  UpdateComponentBody,
  UpdateStoryBody,
  VersionListModel,
  VersionModel,
  VersionParams,
} from './model'
import { MAX_STORY_DEPTH } from './paths'
import { getVersion, listVersions, restoreVersion } from './versions-history'
import {
  archiveStory,
  bulkStories,
  createStory,
  deleteStory,
  getStory,
  listStories,
  publishStory,
  storyChildren,
  storyTree,
  unpublishStory,
  updateStory,
} from './service'

/** Management API of Stories: editors write, viewers read. */
export function storyRoutes(kernel: Kernel, guards: Guards) {
  return (
    new Elysia({ prefix: '/spaces/:space/stories', tags: ['Stories'] })
      .use(guards)
      .get('/', async ({ access, query }) => listStories(kernel, access, query), {
        params: SpaceParams,
        query: ListStoriesQuery,
        spaceRole: 'viewer',
        response: StoryListModel,
        detail: { summary: 'List Stories in full_path order (paginated, without content)' },
      })
      .post(
        '/',
        async ({ access, body, set }) => {
          set.status = 201
          return { data: await createStory(kernel, access, body) }
        },
        {
          params: SpaceParams,
          body: CreateStoryBody,
          spaceRole: 'editor',
          response: { 201: Data(StoryModel) },
          detail: { summary: 'Create a Story (a draft; version 1); content is validated against the blueprints' },
        },
      )
      // Static segments before `/:uuid` so they are never taken for a uuid.
      .get('/tree', async ({ access, query }) => storyTree(kernel, access, { ...query, depth: query.depth ?? MAX_STORY_DEPTH }), {
        params: SpaceParams,
        query: TreeQuery,
        spaceRole: 'viewer',
        response: TreeModel,
        detail: { summary: 'The whole Story tree, paginated by root Story' },
      })
      .post('/bulk', async ({ access, body }) => bulkStories(kernel, access, body), {
        params: SpaceParams,
        body: BulkBody,
        spaceRole: 'editor',
        response: BulkResponseModel,
        detail: { summary: 'Publish, unpublish, archive, delete or move many Stories; per-item results' },
      })
      .get('/:uuid', async ({ access, params, query }) => ({ data: await getStory(kernel, access, params.uuid, query.lang) }), {
        params: StoryParams,
        query: LangQuery,
        spaceRole: 'viewer',
        response: Data(StoryModel),
        detail: { summary: 'A Story with its draft content in `lang` (default: its own locale)' },
      })
      .put('/:uuid', async ({ access, params, body }) => ({ data: await updateStory(kernel, access, params.uuid, body) }), {
        params: StoryParams,
        body: UpdateStoryBody,
        spaceRole: 'editor',
        response: Data(StoryModel),
        detail: { summary: 'Save a Story (a new version); slug or parent changes move its subtree at once' },
      })
      .delete(
        '/:uuid',
        async ({ access, params, set }) => {
          await deleteStory(kernel, access, params.uuid)
          set.status = 204
        },
        { params: StoryParams, spaceRole: 'editor', response: { 204: t.Void() }, detail: { summary: 'Delete a Story and its versions (409 while it has children)' } },
      )
      .post('/:uuid/publish', async ({ access, params }) => ({ data: await publishStory(kernel, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
        response: Data(StoryModel),
        detail: { summary: 'Publish every locale of the current drafts (a no-op without changes)' },
      })
      .post('/:uuid/unpublish', async ({ access, params }) => ({ data: await unpublishStory(kernel, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
        response: Data(StoryModel),
        detail: { summary: 'Withdraw the public snapshot' },
      })
      .post('/:uuid/archive', async ({ access, params }) => ({ data: await archiveStory(kernel, access, params.uuid) }), {
        params: StoryParams,
        spaceRole: 'editor',
        response: Data(StoryModel),
        detail: { summary: 'Archive a Story: it leaves the public surface; afterwards it can only be deleted' },
      })
      .get('/:uuid/versions', async ({ access, params, query }) => listVersions(kernel, access, params.uuid, query), {
        params: StoryParams,
        query: VersionsQuery,
        spaceRole: 'viewer',
        response: VersionListModel,
        detail: { summary: 'The versions of a Story, newest first; `lang` lists those of one locale' },
      })
      .get(
        '/:uuid/versions/:version_no',
        async ({ access, params }) => ({ data: await getVersion(kernel, access, params.uuid, params.version_no) }),
        { params: VersionParams, spaceRole: 'viewer', response: Data(VersionModel), detail: { summary: 'One version with its content' } },
      )
      .post(
        '/:uuid/versions/:version_no/restore',
        async ({ access, params, query }) => ({ data: await restoreVersion(kernel, access, params.uuid, params.version_no, query) }),
        {
          params: VersionParams,
          query: LangQuery,
          spaceRole: 'editor',
          response: Data(StoryModel),
          detail: {
            summary: 'Save the content and name of an old version as a new version (in the version’s locale)',
            description: 'With `lang` (the locale the caller shows), a version of another locale answers 422 naming `lang` instead of writing that locale.',
          },
        },
      )
      .get('/:uuid/children', async ({ access, params, query }) => storyChildren(kernel, access, params.uuid, query.depth ?? 1), {
        params: StoryParams,
        query: ChildrenQuery,
        spaceRole: 'viewer',
        response: ChildrenModel,
        detail: { summary: 'The children of a Story, `depth` levels deep (default 1, at most 10; at most 5,000 nodes)' },
      })
  )
}

/** Component blueprints: editors write, viewers read. */
export function componentRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ prefix: '/spaces/:space/components', tags: ['Components'] })
    .use(guards)
    .get('/', async ({ access }) => ({ data: await listComponents(kernel, access) }), {
      params: SpaceParams,
      spaceRole: 'viewer',
      response: DataList(ComponentModel),
      detail: { summary: 'The component blueprints of a Space' },
    })
    .post(
      '/',
      async ({ access, body, set }) => {
        set.status = 201
        return { data: await createComponent(kernel, access, body) }
      },
      {
        params: SpaceParams,
        body: CreateComponentBody,
        spaceRole: 'editor',
        response: { 201: Data(ComponentModel) },
        detail: { summary: 'Create a component blueprint' },
      },
    )
    .get('/:name', async ({ access, params }) => ({ data: await getComponent(kernel, access, params.name) }), {
      params: ComponentParams,
      spaceRole: 'viewer',
      response: Data(ComponentModel),
      detail: { summary: 'One component blueprint' },
    })
    .get('/:name/usage', async ({ access, params }) => ({ data: await componentUsage(kernel, access, params.name) }), {
      params: ComponentParams,
      spaceRole: 'viewer',
      response: Data(ComponentUsageModel),
      detail: { summary: 'How many Stories use a blueprint (what deleting it must wait for) and which blueprints allow it in blocks fields' },
    })
    .put('/:name', async ({ access, params, body }) => ({ data: await updateComponent(kernel, access, params.name, body) }), {
      params: ComponentParams,
      body: UpdateComponentBody,
      spaceRole: 'editor',
      response: Data(ComponentModel),
      detail: { summary: 'Change a blueprint; `schema`, when given, replaces the whole schema' },
    })
    .delete(
      '/:name',
      async ({ access, params, set }) => {
        await deleteComponent(kernel, access, params.name)
        set.status = 204
      },
      { params: ComponentParams, spaceRole: 'editor', response: { 204: t.Void() }, detail: { summary: 'Delete a blueprint (409 while Stories use it)' } },
    )
}

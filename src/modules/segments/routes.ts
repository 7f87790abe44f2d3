import { Elysia, t } from 'elysia'
import type { Kernel } from '../../kernel/kernel'
import type { Guards } from '../../kernel/guards'
import { Data, DataList, SpaceParams } from '../../kernel/schemas'
import {
  CheckRulesBody,
  CheckRulesModel,
  CreateSegmentBody,
  CreateVariantBody,
  PatchSegmentBody,
  PatchVariantBody,
  SegmentModel,
  SegmentParams,
  SegmentSavedModel,
  VariantModel,
  VariantParams,
  VariantStoryParams,
} from './model'
import {
  createSegment,
  createVariant,
  deleteSegment,
  deleteVariant,
  getSegment,
  listSegments,
  listVariants,
  updateSegment,
  updateVariant,
} from './service'
import { ruleErrors } from './rules'
import type { SegmentRule } from './tables'

const NoContent = t.Void({ description: 'No content' })

const RULES_DOC =
  'Rules (all must match): `type` ∈ country, language, referrer, cookie, query, utm_source, utm_campaign; `operator` ∈ eq, neq, in, not_in, contains, starts_with, regex. ' +
  '`value`: an array of 1–50 strings for in / not_in, a string otherwise; `regex` is RE2 syntax (linear time), at most 200 characters, compiled at save (422 with the reason). ' +
  '`cookie` and `query` rules name their cookie or parameter in `key`. Comparisons are case-insensitive; an absent signal fails every operator but neq and not_in; ' +
  'country comes from SEGMENT_COUNTRY_HEADER and only through TRUSTED_PROXIES (otherwise country rules never match). At most 20 rules per segment, 100 segments per Space. ' +
  '`rules: []` matches every visitor and is refused (422 keyed `rules`) unless the segment says `match_all: true` (which takes no rules: 422 keyed `match_all`). ' +
  'The answer is `{data, warnings}`: `warnings` lists, as `{code, field, message}`, what is saved but will not work as it reads — `country_rule_inactive` for each country rule while TRUSTED_PROXIES is empty.'

/** Spec 4.9: audience segments and per-Story variants (management). */
export function segmentRoutes(kernel: Kernel, guards: Guards) {
  return new Elysia({ tags: ['Personalisation'] })
    .use(guards)
    .group('/spaces/:space/audience-segments', (app) =>
      app
        .get('', async ({ access }) => ({ data: await listSegments(kernel, access) }), {
          params: SpaceParams,
          spaceRole: 'viewer',
          response: DataList(SegmentModel),
          detail: { summary: 'Audience segments of the Space, by priority then id', description: 'Resolution on public reads takes the active segments in this order; the first whose rules all match wins.' },
        })
        .post(
          '',
          async ({ access, body, set }) => {
            set.status = 201
            return createSegment(kernel, access, body)
          },
          {
            params: SpaceParams,
            body: CreateSegmentBody,
            spaceRole: 'editor',
            response: { 201: SegmentSavedModel },
            detail: { summary: 'Create an audience segment', description: `\`key\` is unique per Space (409 conflict); \`active\` defaults to true. ${RULES_DOC}` },
          },
        )
        .post(
          '/check-rules',
          ({ body }) => {
            const errors = ruleErrors(body.rules as SegmentRule[])
            return { data: { valid: Object.keys(errors).length === 0, errors } }
          },
          {
            params: SpaceParams,
            body: CheckRulesBody,
            spaceRole: 'viewer',
            response: CheckRulesModel,
            detail: {
              summary: 'Check rules without saving',
              description: 'The rule checks of a save (value shape per operator, the cookie/query key, RE2 regex compilation and size), answered 200 with the messages a save would answer in its 422, keyed `rules/<i>/<field>`. Saves nothing.',
            },
          },
        )
        .get('/:idOrKey', async ({ access, params }) => ({ data: await getSegment(kernel, access, params.idOrKey) }), {
          params: SegmentParams,
          spaceRole: 'viewer',
          response: Data(SegmentModel),
          detail: { summary: 'One audience segment, by id (digits only) or key' },
        })
        .put('/:idOrKey', ({ access, params, body }) => updateSegment(kernel, access, params.idOrKey, body, true), {
          params: SegmentParams,
          body: CreateSegmentBody,
          spaceRole: 'editor',
          response: SegmentSavedModel,
          detail: { summary: 'Replace an audience segment (by id or key)', description: `Every field but \`active\` (default true) and \`match_all\` (default false) is required. ${RULES_DOC}` },
        })
        .patch('/:idOrKey', ({ access, params, body }) => updateSegment(kernel, access, params.idOrKey, body, false), {
          params: SegmentParams,
          body: PatchSegmentBody,
          spaceRole: 'editor',
          response: SegmentSavedModel,
          detail: { summary: 'Change fields of an audience segment (by id or key)', description: `Given fields replace the stored ones (\`rules\` as a whole). ${RULES_DOC}` },
        })
        .delete(
          '/:idOrKey',
          async ({ access, params, set }) => {
            await deleteSegment(kernel, access, params.idOrKey)
            set.status = 204
          },
          {
            params: SegmentParams,
            spaceRole: 'editor',
            response: { 204: NoContent },
            detail: { summary: 'Delete an audience segment (by id or key) and its variants' },
          },
        ),
    )
    .group('/spaces/:space/stories/:uuid/variants', (app) =>
      app
        .get('', async ({ access, params }) => ({ data: await listVariants(kernel, access, params.uuid) }), {
          params: VariantStoryParams,
          spaceRole: 'viewer',
          response: DataList(VariantModel),
          detail: { summary: 'Draft variants of the Story, by segment priority then locale' },
        })
        .post(
          '',
          async ({ access, params, body, set }) => {
            set.status = 201
            return { data: await createVariant(kernel, access, params.uuid, body) }
          },
          {
            params: VariantStoryParams,
            body: CreateVariantBody,
            spaceRole: 'editor',
            response: { 201: Data(VariantModel) },
            detail: {
              summary: 'Add a variant: content served instead of the Story’s to one segment in one locale',
              description:
                '`lang` defaults to the Space default locale and must be one of its locales; one variant per (Story, segment, lang) (409 conflict). `content` is validated against the component blueprints like a Story save (422 keyed `content/blocks/<i>/<field>`). ' +
                'Variants are content: they reach the public read when the Story is next published (the Story shows `has_unpublished_changes`); `?version=draft` previews them.',
            },
          },
        )
        .patch('/:id', async ({ access, params, body }) => ({ data: await updateVariant(kernel, access, params.uuid, params.id, body) }), {
          params: VariantParams,
          body: PatchVariantBody,
          spaceRole: 'editor',
          response: Data(VariantModel),
          detail: { summary: 'Change a variant (content, segment or locale); public at the next publish' },
        })
        .delete(
          '/:id',
          async ({ access, params, set }) => {
            await deleteVariant(kernel, access, params.uuid, params.id)
            set.status = 204
          },
          {
            params: VariantParams,
            spaceRole: 'editor',
            response: { 204: NoContent },
            detail: { summary: 'Delete a variant (the published one is served until the next publish)' },
          },
        ),
    )
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { memo, useId, useMemo, useState } from 'react'
import { ApiFailure, api, unwrap } from '../../api/client'
import { componentsQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { BlockList } from '../../components/block-editor'
import { CatalogError } from '../../components/catalog-error'
import { toast } from '../../components/toast'
import { Button } from '../../components/ui'
import type { Block, Blueprint } from '../../fields/types'
import { t } from './messages'
import { type Segment, segKeys, segmentsQuery, variantsQuery } from './queries'
import { PreviewAs } from './preview-as'

interface Doc {
  type: 'doc'
  blocks: Block[]
}
const asDoc = (c: unknown): Doc => {
  const d = c as Partial<Doc> | null | undefined
  return { type: 'doc', blocks: Array.isArray(d?.blocks) ? d.blocks : [] }
}

/**
 * The Story editor's variants: per audience segment, in this locale, the content its readers get instead of the
 * default — created from the default, edited with the same block editor, deleted — and which one a reader gets.
 * Variants are drafts: they reach the public read with the Story's next publish. Its props stay the same while the
 * editor types (memo): a keystroke in the Story's form does not render it; "from the default" reads the saved draft.
 */
export const VariantsPanel = memo(function VariantsPanel({ space, uuid, lang, path }: { space: string; uuid: string; lang: string; path: string }) {
  const id = useId()
  const queryClient = useQueryClient()
  const segments = useQuery(segmentsQuery(space))
  const variants = useQuery(variantsQuery(space, uuid))
  const components = useQuery(componentsQuery(space))
  const canWrite = useCan(space, 'POST', '/v1/spaces/{space}/stories/{uuid}/variants')
  const [open, setOpen] = useState<number | null>(null) // the segment whose variant is being edited
  const [failure, setFailure] = useState<unknown>(null)
  const blueprints = useMemo(() => new Map<string, Blueprint>((components.data ?? []).map((c) => [c.name, c as Blueprint])), [components.data])
  const roots = useMemo(() => [...blueprints.values()].filter((b) => b.is_root), [blueprints])
  const refresh = () => queryClient.invalidateQueries({ queryKey: segKeys.variants(space, uuid) })

  const create = useMutation({
    mutationFn: async (s: Segment) => {
      const { data: story } = await unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}', { params: { path: { space, uuid }, query: { lang } } }))
      return unwrap(api.POST('/v1/spaces/{space}/stories/{uuid}/variants', { params: { path: { space, uuid } }, body: { audience_segment_id: s.id, lang, content: asDoc(story.content) } }))
    },
    onSuccess: async (_, s) => {
      toast(t('variants.created', { segment: s.label }))
      setOpen(s.id)
      await refresh()
    },
    onError: setFailure,
  })
  const remove = useMutation({
    mutationFn: (variantId: number) => unwrap(api.DELETE('/v1/spaces/{space}/stories/{uuid}/variants/{id}', { params: { path: { space, uuid, id: variantId } } })),
    onSuccess: async () => {
      toast(t('variants.deleted'))
      setOpen(null)
      await refresh()
    },
    onError: setFailure,
  })

  const list = segments.data ?? []
  const mine = (variants.data ?? []).filter((v) => v.lang === lang)
  const firstActive = list.find((s) => s.active && s.match_all)
  return (
    <section aria-labelledby={id} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200" data-testid="variants-panel">
      <h2 id={id} className="font-semibold">
        {t('variants.title', { lang })}
      </h2>
      <p className="text-sm text-slate-700">{t('variants.intro')}</p>
      <CatalogError error={segments.error ?? variants.error ?? failure} />
      {segments.data && list.length === 0 ? (
        <p className="text-sm">
          {t('variants.noSegments')}{' '}
          <Link to="/spaces/$space/segments" params={{ space }} className="text-indigo-800 underline">
            {t('nav.segments')}
          </Link>
        </p>
      ) : null}
      {list.length ? (
        <ol className="flex flex-col gap-2" aria-label={t('variants.order')}>
          {list.map((s) => {
            const v = mine.find((x) => x.audience_segment_id === s.id)
            // Readers matching a segment get its variant; a segment further down is reached only by readers no
            // earlier active segment caught (a match-all segment catches everyone after it).
            const shadowed = firstActive !== undefined && list.indexOf(firstActive) < list.indexOf(s)
            return (
              <li key={s.id} className="flex flex-col gap-2 rounded-md bg-slate-50 p-3 ring-1 ring-slate-200" data-variant-segment={s.key}>
                <div className="flex flex-wrap items-center gap-3">
                  <div className="min-w-40 flex-1">
                    <p className="font-medium">{s.label}</p>
                    <p className="text-xs text-slate-700" data-testid="reader-gets">
                      {!s.active ? t('variants.inactive') : shadowed ? t('variants.shadowed', { other: firstActive!.label }) : v ? t('variants.getsVariant') : t('variants.getsDefault')}
                    </p>
                  </div>
                  <div className="flex flex-wrap gap-2">
                    {v ? (
                      <>
                        <Button onClick={() => setOpen(open === s.id ? null : s.id)} aria-expanded={open === s.id} aria-label={canWrite ? t('variants.editNamed', { segment: s.label }) : t('variants.showNamed', { segment: s.label })}>
                          {canWrite ? t('variants.edit') : t('variants.show')}
                        </Button>
                        {canWrite ? (
                          <Button tone="danger" onClick={() => remove.mutate(v.id)} disabled={remove.isPending} aria-label={t('variants.deleteNamed', { segment: s.label })}>
                            {t('variants.delete')}
                          </Button>
                        ) : null}
                      </>
                    ) : canWrite ? (
                      <Button onClick={() => create.mutate(s)} disabled={create.isPending} aria-label={t('variants.createNamed', { segment: s.label })}>
                        {t('variants.create')}
                      </Button>
                    ) : null}
                    <PreviewAs space={space} segment={s.key} label={s.label} path={path} onFail={setFailure} />
                  </div>
                </div>
                {v && open === s.id ? (
                  <VariantEditor
                    key={v.id + v.updated_at}
                    space={space}
                    uuid={uuid}
                    variantId={v.id}
                    initial={asDoc(v.content)}
                    roots={roots}
                    blueprints={blueprints}
                    canWrite={canWrite}
                    label={s.label}
                    onSaved={refresh}
                  />
                ) : null}
              </li>
            )
          })}
        </ol>
      ) : null}
      <p className="text-sm text-slate-700">{t('variants.others')}</p>
    </section>
  )
})

function VariantEditor(props: {
  space: string
  uuid: string
  variantId: number
  initial: Doc
  roots: Blueprint[]
  blueprints: Map<string, Blueprint>
  canWrite: boolean
  label: string
  onSaved: () => Promise<unknown>
}) {
  const { space, uuid, variantId } = props
  const [doc, setDoc] = useState<Doc>(props.initial)
  const [dirty, setDirty] = useState(false)
  const save = useMutation({
    mutationFn: () => unwrap(api.PATCH('/v1/spaces/{space}/stories/{uuid}/variants/{id}', { params: { path: { space, uuid, id: variantId } }, body: { content: doc } })),
    onSuccess: async () => {
      setDirty(false)
      toast(t('variants.saved', { segment: props.label }))
      await props.onSaved()
    },
  })
  const errors = useMemo(() => {
    const e = save.error instanceof ApiFailure ? (save.error.body.errors ?? {}) : {}
    return Object.fromEntries(Object.entries(e).map(([k, v]) => [k.replace(/^content\//, ''), v]))
  }, [save.error])
  return (
    <div className="flex flex-col gap-2" data-testid="variant-editor">
      <fieldset disabled={!props.canWrite} className="contents">
        <BlockList
          path="blocks"
          blocks={doc.blocks}
          onChange={(blocks) => {
            setDoc({ ...doc, blocks })
            setDirty(true)
          }}
          allowed={props.roots}
          blueprints={props.blueprints}
          errors={errors}
        />
      </fieldset>
      <CatalogError error={save.error} />
      {props.canWrite ? (
        <div className="flex justify-end">
          <Button tone="primary" onClick={() => save.mutate()} disabled={!dirty || save.isPending} aria-label={t('variants.saveNamed', { segment: props.label })}>
            {t('variants.save')}
          </Button>
        </div>
      ) : null}
    </div>
  )
}

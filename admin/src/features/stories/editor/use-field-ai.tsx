import { useQuery } from '@tanstack/react-query'
import { useCallback } from 'react'
import { useCan } from '../../../api/roles'
import { FieldAi } from '../../ai/field-ai'
import { aiStatusQuery } from '../../ai/queries'
import type { FieldDef } from '../../../fields/types'

/**
 * The field AI slot of the editor's form (block-editor's FieldAiContext): a field's AI actions when the Space has AI
 * on (GET .../ai/status) and the caller may write the Story and use AI (stream-text's x-min-role); otherwise null,
 * and the fields show no AI control.
 */
export function useFieldAi(space: string, uuid: string, lang: string | undefined, locales: string[], canWrite: boolean) {
  const canUse = useCan(space, 'POST', '/v1/spaces/{space}/ai/stream-text')
  const status = useQuery({ ...aiStatusQuery(space), enabled: canWrite && canUse })
  const enabled = canWrite && canUse && status.data?.enabled === true && lang !== undefined
  const key = locales.join(',')
  const render = useCallback(
    (field: { label: string; def: FieldDef; value: unknown; onChange: (v: unknown) => void }) => (
      <FieldAi space={space} storyUuid={uuid} lang={lang!} locales={key ? key.split(',') : [lang!]} {...field} />
    ),
    [space, uuid, lang, key],
  )
  return enabled ? render : null
}

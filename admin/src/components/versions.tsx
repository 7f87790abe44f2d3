import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, unwrap } from '../api/client'
import { Button, Dialog, ErrorNotice, Loading } from './ui'

const when = (iso: string) => new Date(iso).toLocaleString()

/** The Story's versions, newest first; restoring one saves its content and name as a new version. */
export function VersionsPanel({ space, uuid, current, disabled }: { space: string; uuid: string; current: number; disabled: boolean }) {
  const queryClient = useQueryClient()
  const [restoring, setRestoring] = useState<number | null>(null)
  const versions = useQuery({
    queryKey: ['/v1/spaces', space, 'stories', uuid, 'versions', current],
    queryFn: async () => unwrap(api.GET('/v1/spaces/{space}/stories/{uuid}/versions', { params: { path: { space, uuid }, query: { per_page: 50 } } })),
  })
  const restore = useMutation({
    mutationFn: (versionNo: number) =>
      unwrap(api.POST('/v1/spaces/{space}/stories/{uuid}/versions/{version_no}/restore', { params: { path: { space, uuid, version_no: versionNo } } })),
    onSuccess: async () => {
      setRestoring(null)
      await queryClient.invalidateQueries({ queryKey: ['/v1/spaces', space] })
    },
  })
  return (
    <details className="rounded-lg bg-white p-3 ring-1 ring-slate-200">
      <summary className="cursor-pointer text-sm font-semibold">Versions</summary>
      {versions.isPending ? <Loading what="Loading versions" /> : null}
      <ErrorNotice error={versions.error ?? restore.error} />
      <ol className="mt-2 divide-y divide-slate-100" aria-label="Versions">
        {versions.data?.data.map((v) => (
          <li key={v.version_no} className="flex items-center gap-3 py-1.5 text-sm">
            <span className="w-24 font-medium">Version {v.version_no}</span>
            <span className="text-slate-700">{v.lang}</span>
            <span className="flex-1 text-slate-700">
              {when(v.created_at)}
              {v.author ? ` · user ${v.author.user_id}` : ''}
            </span>
            {v.version_no === current ? (
              <span className="text-xs text-slate-600">current</span>
            ) : (
              <Button className="px-2 py-0.5 text-xs" disabled={disabled} onClick={() => setRestoring(v.version_no)} aria-label={`Restore version ${v.version_no}`}>
                Restore
              </Button>
            )}
          </li>
        ))}
      </ol>
      <Dialog open={restoring !== null} title={`Restore version ${restoring}?`} onClose={() => setRestoring(null)}>
        <p className="text-sm">Its content and name are saved as a new version; nothing is lost, and the current version stays in the list.</p>
        <div className="flex justify-end gap-2">
          <Button onClick={() => setRestoring(null)}>Cancel</Button>
          <Button tone="primary" disabled={restore.isPending} onClick={() => restoring !== null && restore.mutate(restoring)}>
            Restore
          </Button>
        </div>
      </Dialog>
    </details>
  )
}

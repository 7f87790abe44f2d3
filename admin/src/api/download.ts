import { getToken } from '../auth'
import { ApiFailure, notifyUnauthorized } from './client'

/**
 * Downloads a file the API streams (a CSV export) with the signed-in user's bearer token: a link cannot carry the
 * header, so the answer is read as a Blob and handed to the browser as a download named `filename`.
 */
export async function downloadFile(path: string, filename: string): Promise<void> {
  const token = getToken()
  let res: Response
  try {
    res = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} })
  } catch {
    throw new ApiFailure(0, { error: 'network', message: 'The server cannot be reached. Check your connection and try again.' })
  }
  if (!res.ok) {
    if (res.status === 401 && token) notifyUnauthorized()
    const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string }
    throw new ApiFailure(res.status, { error: body.error ?? 'error', message: body.message ?? `The server answered ${res.status}.` })
  }
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

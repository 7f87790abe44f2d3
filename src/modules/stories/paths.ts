// Slugs and full paths. A full path is '/' + the slugs from the root down, e.g. /blog/2026/hello-world.
import { validationFailed } from '../../kernel/errors'

export const SLUG = /^[a-z0-9](?:[a-z0-9_-]{0,99})$/
export const SLUG_RULE = 'must be 1 to 100 characters of a-z 0-9 _ -, starting with a letter or digit'
/** Path segments of the deepest Story (a root Story has depth 1). */
export const MAX_STORY_DEPTH = 10

export const isSlug = (s: string) => SLUG.test(s)

export function joinPath(parentPath: string | null, slug: string): string {
  return parentPath ? `${parentPath}/${slug}` : `/${slug}`
}

/** Escapes LIKE wildcards (slugs may contain `_`) so `<prefix>/%` matches the subtree only. */
export function likePrefix(fullPath: string): string {
  return `${fullPath.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`
}

/**
 * The `{path}` of a public read, exactly as it came in the URL (without its leading slash, not percent-decoded), to
 * a full path — or null when it cannot name a Story. Slugs never need percent-encoding, so any `%` (encoded slashes
 * and dots included), empty or dot segments, or a character outside the slug alphabet answers 404 like any unknown
 * path: path traversal has nothing to work with.
 */
export function publicPathToFullPath(raw: string): string | null {
  if (raw.length === 0 || raw.length > 1200) return null
  const segments = raw.split('/')
  if (segments.length > MAX_STORY_DEPTH) return null
  for (const s of segments) if (!SLUG.test(s)) return null
  return `/${raw}`
}

/**
 * A `starts_with` filter as a full-path prefix with its leading slash (optional in the input); null for none (every
 * Story). A plain prefix: `blog/` is the folder's Stories, `blog` also `/blogroll`. 422 under `field` when malformed.
 */
export function pathPrefixOf(startsWith: string | null | undefined, field: string): string | null {
  if (startsWith == null || startsWith === '' || startsWith === '/') return null
  const prefix = startsWith.startsWith('/') ? startsWith : `/${startsWith}`
  if (prefix.length > 1200 || !/^[a-z0-9_/-]+$/.test(prefix)) {
    throw validationFailed({ [field]: ['must be a path prefix: a-z 0-9 _ - and /, at most 1200 characters'] })
  }
  return prefix
}

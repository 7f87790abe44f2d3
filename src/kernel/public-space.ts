import { KernelErrors } from './errors'

/**
 * The public side's contract: anonymous routes that name a Space in their path (`/cdn/{space}/...`) resolve it
 * through the `publicSpace` macro of the guards (kernel/guards.ts), which asks the one resolver the module owning
 * Spaces provides (`publicSpaceResolver` in kernel/module.ts). The kernel names no module: it only knows this shape.
 */

/** A live Space as the public surface sees it: what locale resolution and rendering need, nothing private. */
export interface PublicSpace {
  id: number
  slug: string
  name: string
  defaultLang: string
  /** Locales in display order. */
  codes: string[]
  /** Explicit fallbacks: code → fallback code. */
  fallbacks: Map<string, string>
  /** Memoised locale chains of the public read, keyed by `?lang` value or Accept-Language header (bounded). */
  chains: Map<string, string[]>
}

/** Live Spaces by slug, as the public surface sees them (the spaces module's cache). */
export interface PublicSpaceResolver {
  /** The live Space of `slug`, or null (unknown, archived or malformed); synchronous when cached. */
  get(slug: string): PublicSpace | null | Promise<PublicSpace | null>
}

/**
 * What a route declares with the macro: `publicSpace: true` answers an unknown or archived Space with 404 `not_found`
 * "Space not found."; a route that answers for one resource of the Space names it instead, so the answer does not
 * tell whether the Space or the resource is missing (`{notFound: 'Form'}`: "Form not found."). `headers`: what the 404
 * carries besides the error defaults (`Cache-Control: no-store` unless given).
 */
export type PublicSpaceOptions = true | { notFound?: string; headers?: Record<string, string> }

/** The 404 of a route's `publicSpace` declaration, made once per route (a fresh AppError per answer). */
export function publicSpaceMissing(opts: PublicSpaceOptions): () => Error {
  const what = opts === true ? 'Space' : (opts.notFound ?? 'Space')
  const headers = opts === true ? undefined : opts.headers
  const message = `${what} not found.`
  return () => KernelErrors.notFound(message, undefined, headers)
}

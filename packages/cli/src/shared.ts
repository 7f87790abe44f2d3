/** What the entry and the commands share: exit codes, parsed arguments, the usage error. */

export const EXIT = {
  ok: 0,
  /** `components diff`: the two sides differ. */
  different: 1,
  usage: 2,
  /** Not logged in, or the token was refused (401/403). */
  auth: 3,
  notFound: 4,
  /** The server refused the change (409/422). */
  refused: 5,
  /** The server could not be reached, or answered 5xx. */
  unavailable: 6,
} as const

export interface Args {
  positional: string[]
  flags: Record<string, string | true>
}

/** A command line that cannot be run as given (exit 2). */
export class UsageError extends Error {}

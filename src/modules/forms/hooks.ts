import type { FilterDeclarations } from '../../kernel/filters'

/**
 * The forms' filter hook (kernel/filters.ts): a submission that passed validation and the captcha, before it is
 * stored, with no transaction open. A handler (a plugin) may veto it or amend `data`, which is normalised and
 * validated again against the form. It never carries the client's address or user agent (the forms privacy promise).
 */
export interface FormBeforeSubmit {
  form: { uuid: string; slug: string; name: string }
  /** The normalised field values. Amendable. */
  data: Record<string, unknown>
  /** The locale of the submission (its success message). */
  lang: string
}

declare module '../../kernel/filters' {
  interface FilterMap {
    'form.before_submit': FormBeforeSubmit
  }
}

export const formFilterHooks: FilterDeclarations = {
  'form.before_submit': {
    description: 'Before a form submission is stored: the form and the field values (never the client address); amend `data`.',
    amend: true,
    routes: ['POST /v1/cdn/{space}/forms/{slug}'],
  },
}

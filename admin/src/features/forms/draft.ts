import { ApiFailure } from '../../api/client'
import { t } from './messages'
import type { MessageKey } from './messages'
import { type FieldType, type Form, type FormBody, TEXT_TYPES } from './queries'

/** A field as the builder edits it: `id` keeps React's rows stable, `options` is one choice a line. */
export interface FieldDraft {
  id: string
  key: string
  keyEdited: boolean
  type: FieldType
  label: string
  required: boolean
  options: string
  maxLength: string
}

export type SpamProvider = '' | 'turnstile' | 'hcaptcha'

/** The whole form as the builder edits it (strings where the person types), turned into the API's body by `toBody`. */
export interface Draft {
  slug: string
  slugEdited: boolean
  label: string
  fields: FieldDraft[]
  submitAction: 'store' | 'email' | 'webhook' | 'lead'
  notificationEmail: string
  webhookUrl: string
  redirectUrl: string
  successMessage: Record<string, string>
  rateLimit: string
  spamProvider: SpamProvider
  spamSecret: string
  spamSecretSet: boolean
}

let next = 0
export const newId = () => `f${++next}`

/** A key the API accepts (`^[a-z][a-z0-9_]{0,63}$`) made from a label, for a field whose key nobody typed yet. */
export function keyFromLabel(label: string): string {
  const k = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64)
  return k
}

/** A slug the API accepts (`^[a-z][a-z0-9-]{0,63}$`) made from the form's name. */
export const slugFromLabel = (label: string) => keyFromLabel(label).replace(/_/g, '-')

export function newField(type: FieldType = 'text'): FieldDraft {
  return { id: newId(), key: '', keyEdited: false, type, label: '', required: false, options: '', maxLength: '' }
}

export function emptyDraft(): Draft {
  return {
    slug: '',
    slugEdited: false,
    label: '',
    fields: [newField('text')],
    submitAction: 'store',
    notificationEmail: '',
    webhookUrl: '',
    redirectUrl: '',
    successMessage: {},
    rateLimit: '5',
    spamProvider: '',
    spamSecret: '',
    spamSecretSet: false,
  }
}

export function draftOf(form: Form): Draft {
  return {
    slug: form.slug,
    slugEdited: true,
    label: form.label,
    fields: form.fields.map((f) => ({
      id: newId(),
      key: f.key,
      keyEdited: true,
      type: f.type,
      label: f.label,
      required: f.required ?? false,
      options: (f.options ?? []).join('\n'),
      maxLength: f.max_length === undefined ? '' : String(f.max_length),
    })),
    submitAction: (['store', 'email', 'webhook', 'lead'] as const).find((a) => a === form.submit_action) ?? 'store',
    notificationEmail: form.notification_email ?? '',
    webhookUrl: form.webhook_url ?? '',
    redirectUrl: form.redirect_url ?? '',
    successMessage: { ...form.success_message },
    rateLimit: String(form.rate_limit_per_ip),
    spamProvider: form.spam_provider === 'turnstile' || form.spam_provider === 'hcaptcha' ? form.spam_provider : '',
    spamSecret: '',
    spamSecretSet: form.spam_config?.secret_set ?? false,
  }
}

export const optionList = (options: string) =>
  options
    .split('\n')
    .map((o) => o.trim())
    .filter(Boolean)

const hasOptions = (type: FieldType) => type === 'select' || type === 'radio'
export const takesMaxLength = (type: FieldType) => TEXT_TYPES.includes(type)
export { hasOptions }

/** The API's body. What the person typed goes as typed: the API's 422s say what is wrong, at the field. */
export function toBody(d: Draft): FormBody {
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s))
  const successMessage = Object.fromEntries(Object.entries(d.successMessage).filter(([, v]) => v.trim() !== ''))
  return {
    slug: d.slug,
    label: d.label,
    fields: d.fields.map((f) => ({
      key: f.key,
      type: f.type,
      label: f.label,
      required: f.required,
      ...(hasOptions(f.type) ? { options: optionList(f.options) } : {}),
      ...(takesMaxLength(f.type) && num(f.maxLength) !== undefined ? { max_length: num(f.maxLength) } : {}),
    })),
    submit_action: d.submitAction,
    notification_email: d.notificationEmail.trim() || null,
    webhook_url: d.webhookUrl.trim() || null,
    redirect_url: d.redirectUrl.trim() || null,
    success_message: successMessage,
    ...(num(d.rateLimit) !== undefined ? { rate_limit_per_ip: num(d.rateLimit) } : {}),
    spam_provider: d.spamProvider || null,
    ...(d.spamProvider && d.spamSecret ? { spam_config: { secret: d.spamSecret } } : {}),
  } as FormBody
}

/** Which sentence says what the API found wrong with a field: by the field's path and the API's words. */
function sentenceFor(path: string, message: string): MessageKey | null {
  const last = path.split('/').at(path.startsWith('fields/') ? 2 : 0)
  if (path.startsWith('fields/')) {
    if (last === 'key') return /duplicates/.test(message) ? 'forms.error.keyDuplicate' : 'forms.error.key'
    if (last === 'label') return 'forms.error.fieldLabel'
    if (last === 'options') return /required/.test(message) ? 'forms.error.optionsRequired' : /repeat/.test(message) ? 'forms.error.optionsRepeat' : 'forms.error.options'
    if (last === 'max_length') return /text types/.test(message) ? 'forms.error.maxLengthType' : 'forms.error.maxLength'
    return null
  }
  if (path.startsWith('success_message/')) return 'forms.error.successLocale'
  switch (path) {
    case 'slug':
      return 'forms.error.slug'
    case 'label':
      return 'forms.error.label'
    case 'fields':
      return /lead/.test(message) ? 'forms.error.leadEmail' : 'forms.error.fields'
    case 'notification_email':
      return /required/.test(message) ? 'forms.error.emailRequired' : 'forms.error.email'
    case 'webhook_url':
      return /required/.test(message) ? 'forms.error.webhookRequired' : 'forms.error.webhookUrl'
    case 'redirect_url':
      return 'forms.error.redirectUrl'
    case 'rate_limit_per_ip':
      return 'forms.error.rateLimit'
    case 'spam_config/secret':
      return 'forms.error.spamSecret'
    default:
      return null
  }
}

/** The API's refusal as sentences by field path (`fields/2/key`) in the UI's language; a taken slug at the slug. */
export function builderErrors(error: unknown): Record<string, string[]> {
  if (!(error instanceof ApiFailure)) return {}
  if (error.body.error === 'slug_taken') return { slug: [t('forms.error.slugTaken')] }
  const out: Record<string, string[]> = {}
  for (const [path, messages] of Object.entries(error.body.errors ?? {})) {
    out[path] = messages.map((m) => {
      const key = sentenceFor(path, m)
      return key ? t(key) : m
    })
  }
  return out
}

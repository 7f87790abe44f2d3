import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from '@tanstack/react-router'
import { type ReactNode, useId, useState } from 'react'
import { api, unwrap } from '../../api/client'
import { localesQuery } from '../../api/queries'
import { useCan } from '../../api/roles'
import { CatalogError } from '../../components/catalog-error'
import { toast } from '../../components/toast'
import { Button, Dialog, FieldErrors, TextField } from '../../components/ui'
import { t } from './messages'
import type { MessageKey } from './messages'
import { builderErrors, type Draft, draftOf, emptyDraft, type FieldDraft, hasOptions, keyFromLabel, newField, slugFromLabel, takesMaxLength, toBody } from './draft'
import { FormPreview } from './form-preview'
import { FIELD_TYPES, type FieldType, type Form, formKeys, SUBMIT_ACTIONS } from './queries'

const INPUT = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm aria-invalid:border-red-600'

/**
 * The form builder: name and slug, the fields (type, label or consent text, key, required, choices, max length;
 * added, moved, removed), what happens after a submit (success message per locale, redirect, action: store, e-mail,
 * webhook, lead), captcha and spam limits; beside it the form as a visitor sees it, following every change. A viewer
 * sees the definition with its controls disabled. The API's refusals show at their fields as sentences.
 */
export function FormBuilder({ space, form, onSecret }: { space: string; form: Form | null; onSecret: (secret: string) => void }) {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const canWrite = useCan(space, form ? 'PUT' : 'POST', form ? '/v1/spaces/{space}/forms/{uuid}' : '/v1/spaces/{space}/forms')
  const canArchive = useCan(space, 'DELETE', '/v1/spaces/{space}/forms/{uuid}')
  const canRotate = useCan(space, 'POST', '/v1/spaces/{space}/forms/{uuid}/rotate-secret')
  const locales = useQuery(localesQuery(space))
  const [draft, setDraft] = useState<Draft>(() => (form ? draftOf(form) : emptyDraft()))
  const [previewLang, setPreviewLang] = useState('')
  const [archiving, setArchiving] = useState(false)
  const actionId = useId()
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }))
  const setField = (id: string, patch: Partial<FieldDraft>) => setDraft((d) => ({ ...d, fields: d.fields.map((f) => (f.id === id ? { ...f, ...patch } : f)) }))

  const save = useMutation({
    mutationFn: async () => {
      const body = toBody(draft)
      return form
        ? (await unwrap(api.PUT('/v1/spaces/{space}/forms/{uuid}', { params: { path: { space, uuid: form.uuid } }, body }))).data
        : (await unwrap(api.POST('/v1/spaces/{space}/forms', { params: { path: { space } }, body }))).data
    },
    onSuccess: async (saved) => {
      queryClient.setQueryData(formKeys.form(space, saved.uuid), saved)
      await queryClient.invalidateQueries({ queryKey: formKeys.all(space) })
      toast(t(form ? 'forms.saved' : 'forms.created', { name: saved.label }))
      if (saved.secret) onSecret(saved.secret)
      if (!form) await navigate({ to: '/spaces/$space/forms/$uuid', params: { space, uuid: saved.uuid } })
      else set({ spamSecret: '', spamSecretSet: saved.spam_config?.secret_set ?? false })
    },
  })
  const archive = useMutation({
    mutationFn: async () => unwrap(api.DELETE('/v1/spaces/{space}/forms/{uuid}', { params: { path: { space, uuid: form!.uuid } } })),
    onSuccess: async () => {
      setArchiving(false)
      await queryClient.invalidateQueries({ queryKey: formKeys.all(space) })
      toast(t('forms.archived', { name: form!.label }))
      await navigate({ to: '/spaces/$space/forms', params: { space } })
    },
  })
  const rotate = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/forms/{uuid}/rotate-secret', { params: { path: { space, uuid: form!.uuid } } }))).data,
    onSuccess: (saved) => {
      toast(t('forms.rotated'))
      if (saved.secret) onSecret(saved.secret)
    },
  })
  const errs = builderErrors(save.error)
  const codes = locales.data?.map((l) => l.code) ?? []
  // The paths shown at a field of the builder; anything else (a locale removed since, a field's type) under the form.
  const shownAt = (k: string) =>
    ['slug', 'label', 'fields', 'redirect_url', 'rate_limit_per_ip'].includes(k) ||
    /^fields\/\d+\/(key|label|options|max_length)$/.test(k) ||
    (k.startsWith('success_message/') && codes.includes(k.slice('success_message/'.length))) ||
    (k === 'notification_email' && (draft.submitAction === 'email' || draft.notificationEmail !== '')) ||
    (k === 'webhook_url' && (draft.submitAction === 'webhook' || draft.webhookUrl !== '')) ||
    (k === 'spam_config/secret' && draft.spamProvider !== '')
  const otherErrors = Object.entries(errs).filter(([k]) => !shownAt(k))
  const lang = previewLang || locales.data?.find((l) => l.is_default)?.code || codes[0] || ''

  const move = (index: number, by: -1 | 1) =>
    setDraft((d) => {
      const fields = [...d.fields]
      const [f] = fields.splice(index, 1)
      fields.splice(index + by, 0, f!)
      return { ...d, fields }
    })

  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
      <form
        className="flex min-w-0 flex-col gap-6"
        aria-label={t('forms.builder')}
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          if (canWrite) save.mutate()
        }}
      >
        <fieldset disabled={!canWrite} className="flex min-w-0 flex-col gap-6">
          <Panel title={t('forms.basics')}>
            <div className="grid gap-3 sm:grid-cols-2">
              <TextField
                label={t('forms.name')}
                value={draft.label}
                errors={errs.label}
                onChange={(e) => set({ label: e.target.value, ...(draft.slugEdited ? {} : { slug: slugFromLabel(e.target.value) }) })}
              />
              <TextField label={t('forms.slug')} hint={t('forms.slugHint')} value={draft.slug} errors={errs.slug} onChange={(e) => set({ slug: e.target.value, slugEdited: true })} />
            </div>
          </Panel>

          <Panel title={t('forms.fields')}>
            <FieldErrors errors={errs.fields} />
            <ol className="flex flex-col gap-3">
              {draft.fields.map((f, i) => (
                <li key={f.id}>
                  <FieldEditor
                    field={f}
                    index={i}
                    count={draft.fields.length}
                    errors={errs}
                    onChange={(patch) => setField(f.id, patch)}
                    onMove={(by) => move(i, by)}
                    onRemove={() => setDraft((d) => ({ ...d, fields: d.fields.filter((x) => x.id !== f.id) }))}
                  />
                </li>
              ))}
            </ol>
            <div>
              <Button onClick={() => setDraft((d) => ({ ...d, fields: [...d.fields, newField('text')] }))}>{t('forms.addField')}</Button>
            </div>
          </Panel>

          <Panel title={t('forms.afterSubmit')}>
            {codes.map((code) => (
              <TextAreaField
                key={code}
                label={t('forms.successMessage', { lang: code })}
                value={draft.successMessage[code] ?? ''}
                errors={errs[`success_message/${code}`]}
                onChange={(v) => set({ successMessage: { ...draft.successMessage, [code]: v } })}
                onFocus={() => setPreviewLang(code)}
              />
            ))}
            <TextField label={t('forms.redirectUrl')} hint={t('forms.redirectHint')} type="url" value={draft.redirectUrl} errors={errs.redirect_url} onChange={(e) => set({ redirectUrl: e.target.value })} />
          </Panel>

          <Panel title={t('forms.action')}>
            <fieldset className="flex flex-col gap-2">
              <legend className="text-sm font-medium text-slate-800">{t('forms.actionLegend')}</legend>
              {SUBMIT_ACTIONS.map((a) => (
                <div key={a} className="text-sm">
                  <label className="flex items-center gap-2 font-medium">
                    <input type="radio" name="submit_action" value={a} checked={draft.submitAction === a} onChange={() => set({ submitAction: a })} aria-describedby={`${actionId}-${a}`} />
                    {t(`forms.action.${a}` as MessageKey)}
                  </label>
                  <p id={`${actionId}-${a}`} className="ml-6 text-xs text-slate-600">
                    {t(`forms.action.${a}.help` as MessageKey)}
                  </p>
                </div>
              ))}
            </fieldset>
            {draft.submitAction === 'email' || draft.notificationEmail ? (
              <TextField label={t('forms.notificationEmail')} type="email" value={draft.notificationEmail} errors={errs.notification_email} onChange={(e) => set({ notificationEmail: e.target.value })} />
            ) : null}
            {draft.submitAction === 'webhook' || draft.webhookUrl ? (
              <TextField label={t('forms.webhookUrl')} hint={t('forms.webhookHint')} type="url" value={draft.webhookUrl} errors={errs.webhook_url} onChange={(e) => set({ webhookUrl: e.target.value })} />
            ) : null}
          </Panel>

          <Panel title={t('forms.spam')}>
            <p className="text-xs text-slate-600">{t('forms.spamHelp')}</p>
            <TextField label={t('forms.rateLimit')} hint={t('forms.rateLimitHint')} type="number" min={1} max={10000} value={draft.rateLimit} errors={errs.rate_limit_per_ip} onChange={(e) => set({ rateLimit: e.target.value })} />
            <SelectField
              label={t('forms.captcha')}
              value={draft.spamProvider}
              options={[
                ['', t('forms.captcha.none')],
                ['turnstile', t('forms.captcha.turnstile')],
                ['hcaptcha', t('forms.captcha.hcaptcha')],
              ]}
              onChange={(v) => set({ spamProvider: v as Draft['spamProvider'] })}
            />
            {draft.spamProvider ? (
              <TextField
                label={t('forms.captchaSecret')}
                hint={draft.spamSecretSet ? t('forms.captchaSecretKept') : t('forms.captchaSecretHint')}
                type="password"
                autoComplete="off"
                value={draft.spamSecret}
                errors={errs['spam_config/secret']}
                onChange={(e) => set({ spamSecret: e.target.value })}
              />
            ) : null}
          </Panel>
        </fieldset>

        {otherErrors.length ? <FieldErrors errors={otherErrors.flatMap(([k, m]) => m.map((x) => `${k}: ${x}`))} /> : null}
        {save.error && !Object.keys(errs).length ? <CatalogError error={save.error} /> : null}
        <CatalogError error={rotate.error} />
        {save.error && Object.keys(errs).length ? (
          <p role="alert" className="text-sm text-red-800">
            {t('forms.fixErrors')}
          </p>
        ) : null}
        {canWrite || (form && (canArchive || canRotate)) ? (
          <div className="flex flex-wrap gap-3">
            {canWrite ? (
              <Button type="submit" tone="primary" disabled={save.isPending}>
                {form ? t('forms.save') : t('forms.create')}
              </Button>
            ) : null}
            {form?.submit_action === 'webhook' && canRotate ? (
              <Button disabled={rotate.isPending} onClick={() => rotate.mutate()}>
                {t('forms.rotate')}
              </Button>
            ) : null}
            {form && canArchive ? (
              <Button tone="danger" onClick={() => setArchiving(true)}>
                {t('forms.archive')}
              </Button>
            ) : null}
          </div>
        ) : null}
      </form>
      <div className="flex min-w-0 flex-col gap-3">
        {codes.length > 1 ? (
          <SelectField label={t('forms.previewLang')} value={lang} options={codes.map((c) => [c, c])} onChange={setPreviewLang} />
        ) : null}
        <FormPreview draft={draft} lang={lang} />
      </div>
      <Dialog open={archiving} title={t('forms.archiveTitle', { name: form?.label ?? '' })} onClose={() => setArchiving(false)}>
        <p className="text-sm">{t('forms.archiveText')}</p>
        <CatalogError error={archive.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setArchiving(false)}>{t('common.cancel')}</Button>
          <Button tone="danger" disabled={archive.isPending} onClick={() => archive.mutate()}>
            {t('forms.archive')}
          </Button>
        </div>
      </Dialog>
    </div>
  )
}

function Panel({ title, children }: { title: string; children: ReactNode }) {
  const id = useId()
  return (
    <section aria-labelledby={id} className="flex flex-col gap-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id={id} className="text-base font-semibold">
        {title}
      </h2>
      {children}
    </section>
  )
}

function FieldEditor({
  field: f,
  index,
  count,
  errors,
  onChange,
  onMove,
  onRemove,
}: {
  field: FieldDraft
  index: number
  count: number
  errors: Record<string, string[]>
  onChange: (patch: Partial<FieldDraft>) => void
  onMove: (by: -1 | 1) => void
  onRemove: () => void
}) {
  const err = (k: string) => errors[`fields/${index}/${k}`]
  const name = f.label || t('forms.untitledField')
  const consent = f.type === 'consent'
  return (
    <fieldset className="flex flex-col gap-3 rounded-md border border-slate-200 p-3" data-field={f.key || index}>
      <legend className="px-1 text-sm font-medium">{t('forms.fieldN', { n: index + 1, name })}</legend>
      <div className="grid gap-3 sm:grid-cols-2">
        <SelectField
          label={t('forms.fieldType')}
          value={f.type}
          options={FIELD_TYPES.map((ty) => [ty, t(`forms.type.${ty}` as MessageKey)])}
          onChange={(v) => onChange({ type: v as FieldType })}
        />
        {consent ? (
          <TextAreaField label={t('forms.consentText')} value={f.label} errors={err('label')} onChange={(v) => onChange({ label: v, ...(f.keyEdited ? {} : { key: keyFromLabel(v).slice(0, 24) || 'consent' }) })} />
        ) : (
          <TextField label={t('forms.fieldLabel')} value={f.label} errors={err('label')} onChange={(e) => onChange({ label: e.target.value, ...(f.keyEdited ? {} : { key: keyFromLabel(e.target.value) }) })} />
        )}
        <TextField label={t('forms.fieldKey')} hint={t('forms.fieldKeyHint')} value={f.key} errors={err('key')} onChange={(e) => onChange({ key: e.target.value, keyEdited: true })} />
        {takesMaxLength(f.type) ? (
          <TextField label={t('forms.maxLength')} type="number" min={1} max={5000} value={f.maxLength} errors={err('max_length')} onChange={(e) => onChange({ maxLength: e.target.value })} />
        ) : null}
      </div>
      {hasOptions(f.type) ? <TextAreaField label={t('forms.options')} hint={t('forms.optionsHint')} value={f.options} errors={err('options')} onChange={(v) => onChange({ options: v })} /> : null}
      {f.type !== 'hidden' ? (
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={f.required} onChange={(e) => onChange({ required: e.target.checked })} />
          {consent || f.type === 'checkbox' ? t('forms.requiredChecked') : t('forms.required')}
        </label>
      ) : null}
      <div className="flex flex-wrap gap-2">
        <Button disabled={index === 0} onClick={() => onMove(-1)} aria-label={t('forms.moveUp', { name })}>
          {t('forms.up')}
        </Button>
        <Button disabled={index === count - 1} onClick={() => onMove(1)} aria-label={t('forms.moveDown', { name })}>
          {t('forms.down')}
        </Button>
        <Button disabled={count === 1} onClick={onRemove} aria-label={t('forms.removeField', { name })}>
          {t('forms.remove')}
        </Button>
      </div>
    </fieldset>
  )
}

function TextAreaField({ label, value, errors, hint, onChange, onFocus }: { label: string; value: string; errors?: string[]; hint?: string; onChange: (v: string) => void; onFocus?: () => void }) {
  const id = useId()
  const describedBy = errors?.length ? `${id}-err` : hint ? `${id}-hint` : undefined
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      <textarea id={id} rows={2} value={value} onChange={(e) => onChange(e.target.value)} onFocus={onFocus} aria-invalid={errors?.length ? true : undefined} aria-describedby={describedBy} className={INPUT} />
      {hint && !errors?.length ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600">
          {hint}
        </p>
      ) : null}
      <FieldErrors id={`${id}-err`} errors={errors} />
    </div>
  )
}

export function SelectField({ label, value, options, onChange }: { label: string; value: string; options: [string, string][]; onChange: (v: string) => void }) {
  const id = useId()
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} className={INPUT}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}

import { t } from './messages'
import { type FormFieldDef } from './queries'

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const INPUT_TYPES: Partial<Record<FormFieldDef['type'], string>> = { text: 'text', email: 'email', tel: 'tel', number: 'number', file: 'url' }

function fieldHtml(slug: string, f: FormFieldDef): string {
  const id = `cs-${slug}-${f.key}`
  const req = f.required ? ' required' : ''
  const err = `<p id="${id}-error" data-error-for="${f.key}" style="color:#b91c1c"></p>`
  const desc = ` aria-describedby="${id}-error"`
  const label = esc(f.label)
  if (f.type === 'hidden') return `  <input type="hidden" name="${f.key}">`
  if (f.type === 'checkbox' || f.type === 'consent')
    return `  <p><input type="checkbox" id="${id}" name="${f.key}"${req}${desc}> <label for="${id}">${label}</label></p>\n  ${err}`
  if (f.type === 'radio') {
    const opts = (f.options ?? []).map((o, i) => `<label><input type="radio" name="${f.key}" value="${esc(o)}"${req}${i === 0 ? desc : ''}> ${esc(o)}</label>`).join('\n    ')
    return `  <fieldset><legend>${label}</legend>\n    ${opts}\n  </fieldset>\n  ${err}`
  }
  const max = f.max_length ? ` maxlength="${f.max_length}"` : ''
  let control: string
  if (f.type === 'textarea') control = `<textarea id="${id}" name="${f.key}"${req}${max}${desc}></textarea>`
  else if (f.type === 'select')
    control = `<select id="${id}" name="${f.key}"${req}${desc}><option value=""></option>${(f.options ?? []).map((o) => `<option>${esc(o)}</option>`).join('')}</select>`
  else control = `<input type="${INPUT_TYPES[f.type] ?? 'text'}" id="${id}" name="${f.key}"${req}${max}${desc}>`
  return `  <p><label for="${id}">${label}</label><br>${control}</p>\n  ${err}`
}

/**
 * What a site pastes to show the form: the form's markup (a label per field, a place for each field's error) marked
 * `data-service-form`, and the embed script (its SRI hash from /v1/version), which sends the form as JSON to the
 * public submit (with the honeypot and the time it was shown), then shows the success message in the page's
 * language, or each refused field's error at the field. No inline script: it works under a strict CSP.
 */
export function embedSnippet(o: { origin: string; space: string; slug: string; fields: FormFieldDef[]; embed?: { url: string; integrity: string } }): string {
  const formId = `cs-form-${o.slug}`
  const script = o.embed
    ? `<script src="${esc(o.embed.url)}" integrity="${esc(o.embed.integrity)}" crossorigin="anonymous" async data-space="${esc(o.space)}"></script>`
    : `<script src="${esc(o.origin)}/embed.js" crossorigin="anonymous" async data-space="${esc(o.space)}"></script>`
  return [
    `<form id="${formId}" data-service-form="${esc(o.slug)}" data-space="${esc(o.space)}" data-thanks="${esc(t('forms.embed.thanks'))}" data-failed="${esc(t('forms.embed.failed'))}" novalidate>`,
    ...o.fields.map((f) => fieldHtml(o.slug, f)),
    `  <input type="text" name="_hp" tabindex="-1" autocomplete="off" aria-hidden="true" style="position:absolute;left:-10000px">`,
    `  <button type="submit">${esc(t('forms.embed.submitText'))}</button>`,
    `  <p role="status" data-form-status></p>`,
    `</form>`,
    script,
  ].join('\n')
}

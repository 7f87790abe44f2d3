/**
 * The form builder's pure parts (admin/src/features/forms/draft.ts, embed-snippet.ts): keys and slugs made from
 * labels, the API body built from what was typed, the API's 422 paths turned into the catalog's sentences, and the
 * embed snippet's markup (labels escaped, one error line per field).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ApiFailure } from '../../admin/src/api/client'
import { builderErrors, draftOf, emptyDraft, keyFromLabel, newField, slugFromLabel, toBody } from '../../admin/src/features/forms/draft'
import { embedSnippet } from '../../admin/src/features/forms/embed-snippet'

setDefaultTimeout(10_000)

describe('form builder draft', () => {
  test('keys and slugs from labels match the API patterns', () => {
    expect(keyFromLabel('Your name')).toBe('your_name')
    expect(keyFromLabel('2. Größe (cm)')).toBe('grosse_cm')
    expect(keyFromLabel('!!!')).toBe('')
    expect(slugFromLabel('Contact us — now')).toBe('contact-us-now')
    for (const label of ['Your name', '2. Größe (cm)', 'Ünïcödé fïeld', 'x'.repeat(100)]) {
      const k = keyFromLabel(label)
      if (k) expect(k).toMatch(/^[a-z][a-z0-9_]{0,63}$/)
    }
  })

  test('toBody: choices only for select/radio, max_length only for text types, empty messages and secrets left out', () => {
    const d = emptyDraft()
    d.slug = 'c'
    d.label = 'C'
    d.fields = [
      { ...newField('select'), key: 'topic', label: 'Topic', options: ' a \n\nb\n', maxLength: '10' },
      { ...newField('text'), key: 'name', label: 'Name', maxLength: '80', options: 'x' },
      { ...newField('consent'), key: 'ok', label: 'I agree', required: true },
    ]
    d.successMessage = { en: 'Thanks', de: '  ' }
    d.spamProvider = 'turnstile'
    const body = toBody(d)
    expect(body.fields).toEqual([
      { key: 'topic', type: 'select', label: 'Topic', required: false, options: ['a', 'b'] },
      { key: 'name', type: 'text', label: 'Name', required: false, max_length: 80 },
      { key: 'ok', type: 'consent', label: 'I agree', required: true },
    ])
    expect(body.success_message).toEqual({ en: 'Thanks' })
    expect(body.spam_provider).toBe('turnstile')
    expect(body.spam_config).toBeUndefined()
    expect(body.rate_limit_per_ip).toBe(5)
    expect(toBody({ ...d, spamSecret: 's3cret' }).spam_config).toEqual({ secret: 's3cret' })
    expect(toBody({ ...d, spamProvider: '', spamSecret: 's3cret' }).spam_config).toBeUndefined()
  })

  test('draftOf → toBody keeps a stored form as it is', () => {
    const form = {
      uuid: 'u',
      slug: 'contact',
      label: 'Contact',
      fields: [
        { key: 'name', type: 'text' as const, label: 'Name', required: true, max_length: 100 },
        { key: 'kind', type: 'radio' as const, label: 'Kind', required: false, options: ['a', 'b'] },
      ],
      submit_action: 'email',
      notification_email: 'team@example.com',
      webhook_url: null,
      redirect_url: null,
      success_message: { en: 'Thanks' },
      rate_limit_per_ip: 7,
      spam_provider: null,
      spam_config: null,
      compiled_schema: {},
      has_webhook_secret: false,
      archived_at: null,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
    }
    expect(toBody(draftOf(form))).toEqual({
      slug: 'contact',
      label: 'Contact',
      fields: form.fields,
      submit_action: 'email',
      notification_email: 'team@example.com',
      webhook_url: null,
      redirect_url: null,
      success_message: { en: 'Thanks' },
      rate_limit_per_ip: 7,
      spam_provider: null,
    })
  })

  test('the API’s refusals become sentences at their paths; unknown ones keep the server’s words', () => {
    const failure = new ApiFailure(422, {
      error: 'validation_failed',
      message: 'The request is not valid.',
      errors: {
        'fields/1/key': ['duplicates the key "a"'],
        'fields/0/key': ['must match ^[a-z][a-z0-9_]{0,63}$'],
        'fields/1/options': ['is required for select fields'],
        notification_email: ['is required when submit_action is email'],
        'success_message/fr': ['is not a locale of the Space (en)'],
        fields: ['a lead form needs a field of type email'],
        'fields/2/type': ['must be one of …'],
      },
    })
    const e = builderErrors(failure)
    expect(e['fields/1/key']).toEqual(['Another field has this key: each key may be used once.'])
    expect(e['fields/0/key']).toEqual(['Use lower-case letters, digits and _, starting with a letter (at most 64).'])
    expect(e['fields/1/options']).toEqual(['This type needs choices: one a line.'])
    expect(e.notification_email).toEqual(['Give the address the submissions are mailed to.'])
    expect(e['success_message/fr']).toEqual(['This language is not one of the Space’s.'])
    expect(e.fields).toEqual(['A form that adds subscribers needs a field of the type E-mail address.'])
    expect(e['fields/2/type']).toEqual(['must be one of …'])
    expect(builderErrors(new ApiFailure(409, { error: 'slug_taken', message: 'taken' }))).toEqual({ slug: ['Another form of this Space has this slug: choose another.'] })
    expect(builderErrors(new Error('x'))).toEqual({})
  })

  test('the embed snippet escapes labels and choices and has an error line per field', () => {
    const html = embedSnippet({
      origin: 'https://cms.example.com',
      space: 'acme',
      slug: 'contact',
      fields: [
        { key: 'name', type: 'text', label: 'Name <b>"x"</b>', required: true, max_length: 50 },
        { key: 'topic', type: 'select', label: 'Topic', options: ['a&b', '<script>'] },
        { key: 'ok', type: 'consent', label: 'I agree', required: true },
      ],
      embed: { url: 'https://cms.example.com/embed.js', integrity: 'sha384-abc' },
    })
    expect(html).toContain('<label for="cs-contact-name">Name &lt;b&gt;&quot;x&quot;&lt;/b&gt;</label>')
    expect(html).toContain('maxlength="50"')
    expect(html).toContain('<option>a&amp;b</option><option>&lt;script&gt;</option>')
    expect(html).not.toContain('<script>')
    expect(html).toContain('data-service-form="contact" data-space="acme"')
    for (const key of ['name', 'topic', 'ok']) expect(html).toContain(`data-error-for="${key}"`)
    expect(html).toContain('<script src="https://cms.example.com/embed.js" integrity="sha384-abc" crossorigin="anonymous" async data-space="acme"></script>')
    expect(html).toContain('name="_hp"')
  })
})

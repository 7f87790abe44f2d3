import type { SpaceAccess } from '../../kernel/auth'
import type { Kernel } from '../../kernel/kernel'
import { conflict } from '../../kernel/errors'
import { createDatasource, listDatasources, pushTarget, storePush } from '../datasources/service'
import { createForm, listForms } from '../forms/service'
import { getSpace } from '../spaces/service'
import { createComponent, listComponents } from '../stories/components'
import { createStory, listStories, publishStory, updateStory } from '../stories/service'

// The starter content of a new Space (onboarding with `sample_content: true`, pitch demos, `content-service seed`):
// written through the stories, forms and datasources services (never their tables), so it is validated, versioned,
// published and announced (search index, CDN cache, webhooks) exactly like content an editor makes.

/** What the sample step made, by name. */
export interface SampleSummary {
  components: string[]
  /** Full paths of the Stories (folders included); every non-folder Story is published. */
  stories: string[]
  locales: string[]
  forms: string[]
  datasources: string[]
}

interface Texts {
  welcome: (space: string) => string
  lead: string
  intro: string
  blog: string
  helloTitle: string
  helloLead: string
  helloBody: string
  startTitle: string
  startLead: string
  startBody: string
  authors: string
  authorBio: string
  tagline: string
}

const EN: Texts = {
  welcome: (space) => `Welcome to ${space}`,
  lead: 'This home page is sample content: edit it, publish it, or delete it.',
  intro: 'Every Story here is published, so the CDN, search and GraphQL answer at once.',
  blog: 'Blog',
  helloTitle: 'Hello world',
  helloLead: 'The first post of the sample blog.',
  helloBody: 'Posts live in the blog folder. Each one is a Story with a headline, a lead, a body and tags.',
  startTitle: 'Getting started',
  startLead: 'Three steps from sample content to your own.',
  startBody: 'Create blueprints, write Stories in every locale, publish them and read them from the CDN.',
  authors: 'Authors',
  authorBio: 'Writes the sample posts of this Space.',
  tagline: 'Content for every channel',
}

// A few languages get real sample text, so search in each locale finds words of that language; others read English.
const TEXTS: Record<string, Texts> = {
  en: EN,
  de: {
    welcome: (space) => `Willkommen bei ${space}`,
    lead: 'Diese Startseite ist Beispielinhalt: bearbeiten, veröffentlichen oder löschen.',
    intro: 'Jede Story hier ist veröffentlicht, also antworten CDN, Suche und GraphQL sofort.',
    blog: 'Blog',
    helloTitle: 'Hallo Welt',
    helloLead: 'Der erste Beitrag des Beispielblogs.',
    helloBody: 'Beiträge liegen im Blog-Ordner. Jeder ist eine Story mit Überschrift, Vorspann, Text und Schlagwörtern.',
    startTitle: 'Erste Schritte',
    startLead: 'Drei Schritte vom Beispielinhalt zum eigenen.',
    startBody: 'Blaupausen anlegen, Storys in jeder Sprache schreiben, veröffentlichen und über das CDN lesen.',
    authors: 'Autorinnen',
    authorBio: 'Schreibt die Beispielbeiträge dieses Space.',
    tagline: 'Inhalte für jeden Kanal',
  },
  fr: {
    welcome: (space) => `Bienvenue sur ${space}`,
    lead: "Cette page d'accueil est un contenu d'exemple : modifiez-la, publiez-la ou supprimez-la.",
    intro: 'Chaque Story ici est publiée : le CDN, la recherche et GraphQL répondent tout de suite.',
    blog: 'Blog',
    helloTitle: 'Bonjour le monde',
    helloLead: "Le premier article du blog d'exemple.",
    helloBody: "Les articles sont dans le dossier blog. Chacun est une Story avec un titre, un chapeau, un texte et des mots-clés.",
    startTitle: 'Premiers pas',
    startLead: "Trois étapes du contenu d'exemple au vôtre.",
    startBody: 'Créez des modèles, écrivez des Stories dans chaque langue, publiez-les et lisez-les depuis le CDN.',
    authors: 'Auteurs',
    authorBio: "Écrit les articles d'exemple de ce Space.",
    tagline: 'Du contenu pour chaque canal',
  },
}

const textsFor = (lang: string): Texts => TEXTS[lang] ?? TEXTS[lang.split('-')[0]] ?? EN

const BLUEPRINTS = [
  {
    name: 'text_block',
    display_name: 'Text block',
    is_root: false,
    is_nestable: true,
    schema: { text: { type: 'textarea', required: true } },
  },
  {
    name: 'page',
    display_name: 'Page',
    is_root: true,
    is_nestable: false,
    schema: {
      headline: { type: 'text', required: true, max_length: 200 },
      lead: { type: 'textarea' },
      body: { type: 'blocks', component_whitelist: ['text_block'] },
    },
  },
  {
    name: 'post',
    display_name: 'Blog post',
    is_root: true,
    is_nestable: false,
    schema: {
      headline: { type: 'text', required: true, max_length: 200 },
      lead: { type: 'textarea' },
      body: { type: 'markdown' },
      tags: { type: 'tags' },
      author: { type: 'text', translatable: false },
    },
  },
  {
    name: 'author',
    display_name: 'Author',
    is_root: true,
    is_nestable: false,
    schema: { headline: { type: 'text', required: true, translatable: false }, lead: { type: 'textarea' } },
  },
] as const

const doc = (...blocks: Record<string, unknown>[]) => ({ type: 'doc', blocks })

interface StoryPlan {
  key: string
  name: (t: Texts, space: string) => string
  slug: string
  parent?: string
  folder?: boolean
  content?: (t: Texts, space: string) => Record<string, unknown>
}

const STORIES: StoryPlan[] = [
  {
    key: 'home',
    name: (t, space) => t.welcome(space),
    slug: 'home',
    content: (t, space) =>
      doc({
        component: 'page',
        _uid: 'home',
        headline: t.welcome(space),
        lead: t.lead,
        // A datasource marker: the read replaces it with the sample datasource's tagline.
        body: [
          { component: 'text_block', _uid: 'intro', text: t.intro },
          { component: 'text_block', _uid: 'tagline', text: '$ds:site_facts.tagline.value' },
        ],
      }),
  },
  { key: 'blog', name: (t) => t.blog, slug: 'blog', folder: true },
  {
    key: 'hello',
    name: (t) => t.helloTitle,
    slug: 'hello-world',
    parent: 'blog',
    content: (t) =>
      doc({ component: 'post', _uid: 'post', headline: t.helloTitle, lead: t.helloLead, body: t.helloBody, tags: ['sample', 'news'], author: 'Sample Author' }),
  },
  {
    key: 'start',
    name: (t) => t.startTitle,
    slug: 'getting-started',
    parent: 'blog',
    content: (t) =>
      doc({ component: 'post', _uid: 'post', headline: t.startTitle, lead: t.startLead, body: t.startBody, tags: ['sample', 'guide'], author: 'Sample Author' }),
  },
  { key: 'authors', name: (t) => t.authors, slug: 'authors', folder: true },
  {
    key: 'author',
    name: () => 'Sample Author',
    slug: 'sample-author',
    parent: 'authors',
    content: (t) => doc({ component: 'author', _uid: 'author', headline: 'Sample Author', lead: t.authorBio }),
  },
]

/**
 * Writes the starter set into a Space the caller is admin of: four blueprints, a home page, a blog folder with two
 * posts and an authors folder with one author (each in every locale of the Space, published), a contact form and a
 * `site_facts` datasource the home page reads a marker from. Each piece is its own service call (own transaction),
 * so a failure part-way leaves what was written before it; the services' conflicts (a name taken already) are
 * 409s as through the API.
 */
export async function seedSampleContent(kernel: Kernel, access: SpaceAccess): Promise<SampleSummary> {
  const space = await getSpace(kernel, access)
  const def = space.default_lang
  const others = space.locales.filter((l) => l !== def)
  for (const b of BLUEPRINTS) {
    await createComponent(kernel, access, { ...b, schema: structuredClone(b.schema) as Record<string, unknown> })
  }

  // The datasource first: the home page's marker resolves from its first read on.
  const ds = await createDatasource(kernel, access, {
    key: 'site_facts',
    label: 'Site facts (sample)',
    type: 'webhook_push',
    config: { secret_hash: 'auto', schema: { key: 'string', lang: 'string', value: 'string' } },
  })
  await storePush(kernel, await pushTarget(kernel, access.space.id, ds.key), [
    { key: 'tagline', lang: def, value: textsFor(def).tagline },
    { key: 'founded', lang: def, value: String(kernel.clock.now().getUTCFullYear()) },
  ])

  const uuids = new Map<string, string>()
  const paths: string[] = []
  for (const plan of STORIES) {
    const t = textsFor(def)
    const created = await createStory(kernel, access, {
      name: plan.name(t, space.name),
      slug: plan.slug,
      parent_uuid: plan.parent ? uuids.get(plan.parent)! : null,
      is_folder: plan.folder ?? false,
      lang: def,
      ...(plan.content ? { content: plan.content(t, space.name) } : {}),
    })
    uuids.set(plan.key, created.uuid)
    paths.push(created.full_path)
    if (plan.folder || !plan.content) continue
    for (const lang of others) {
      const lt = textsFor(lang)
      await updateStory(kernel, access, created.uuid, { lang, name: plan.name(lt, space.name), content: plan.content(lt, space.name) })
    }
    await publishStory(kernel, access, created.uuid)
  }

  const successMessage: Record<string, string> = {}
  for (const lang of space.locales) successMessage[lang] = lang.startsWith('de') ? 'Danke! Wir melden uns.' : lang.startsWith('fr') ? 'Merci ! Nous vous répondrons.' : 'Thank you! We will be in touch.'
  const form = await createForm(kernel, access, {
    slug: 'contact',
    label: 'Contact (sample)',
    fields: [
      { key: 'name', type: 'text', label: 'Name', required: true, max_length: 200 },
      { key: 'email', type: 'email', label: 'E-mail', required: true },
      { key: 'message', type: 'textarea', label: 'Message', required: true, max_length: 2000 },
    ],
    submit_action: 'store',
    success_message: successMessage,
  })

  return {
    components: BLUEPRINTS.map((b) => b.name),
    stories: paths,
    locales: space.locales,
    forms: [form.slug],
    datasources: [ds.key],
  }
}

/**
 * `POST /spaces/{space}/sample-content`: the starter set into an existing Space, only while it holds nothing the set
 * would collide with — no Story (archived ones included), no blueprint named like a sample one, no `contact` form, no
 * `site_facts` datasource. Otherwise 409 `conflict` naming what is in the way, and nothing is written.
 */
export async function seedEmptySpace(kernel: Kernel, access: SpaceAccess): Promise<SampleSummary> {
  const inTheWay: string[] = []
  let stories = 0
  for (const status of [undefined, 'archived'] as const) stories += (await listStories(kernel, access, { status, page: 1, per_page: 1 })).meta.total
  if (stories > 0) inTheWay.push(`${stories} Stories`)
  const names = new Set<string>(BLUEPRINTS.map((b) => b.name))
  const taken = (await listComponents(kernel, access)).filter((c) => names.has(c.name)).map((c) => c.name)
  if (taken.length) inTheWay.push(`the blueprints ${taken.join(', ')}`)
  if ((await listForms(kernel, access, false)).some((f) => f.slug === 'contact')) inTheWay.push('a form "contact"')
  if ((await listDatasources(kernel, access)).some((d) => d.key === 'site_facts')) inTheWay.push('a datasource "site_facts"')
  if (inTheWay.length) throw conflict(`The sample content goes only into a Space without it: this one has ${inTheWay.join(', ')}.`)
  return seedSampleContent(kernel, access)
}

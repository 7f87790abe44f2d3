import { and, asc, eq, max } from 'drizzle-orm'
import { spaceLocales } from '../../kernel/tables'
import type { SpaceAccess } from '../../kernel/auth'
import type { DbOrTx } from '../../kernel/db'
import { notFound, uniqueAs, validationFailed } from '../../kernel/errors'
import { transact } from '../../kernel/events'
import type { Kernel } from '../../kernel/kernel'
import { canonicalLocale } from '../../kernel/locale'
import { type LocaleView, SpaceErrors } from './model'

// The locales of a Space (space_locales). Changes emit space.locales_changed, which the public caches follow.

export interface LocaleSettings {
  /** Configured locales in display order. */
  codes: string[]
  /** Explicit fallbacks: code → fallback code. */
  fallbacks: Map<string, string>
}

/** The locale configuration of a Space, for locale resolution (Story saves, the public read). */
export async function localeSettings(db: DbOrTx, spaceId: number): Promise<LocaleSettings> {
  const rows = await db
    .select({ code: spaceLocales.code, fallback: spaceLocales.fallback })
    .from(spaceLocales)
    .where(eq(spaceLocales.spaceId, spaceId))
    .orderBy(asc(spaceLocales.position), asc(spaceLocales.code))
  const fallbacks = new Map<string, string>()
  for (const r of rows) if (r.fallback) fallbacks.set(r.code, r.fallback)
  return { codes: rows.map((r) => r.code), fallbacks }
}

export async function listLocales(kernel: Kernel, access: SpaceAccess): Promise<LocaleView[]> {
  const rows = await kernel.db.db
    .select()
    .from(spaceLocales)
    .where(eq(spaceLocales.spaceId, access.space.id))
    .orderBy(asc(spaceLocales.position), asc(spaceLocales.code))
  return rows.map((r) => ({
    code: r.code,
    fallback: r.fallback,
    is_default: r.code === access.space.defaultLang,
    position: r.position,
  }))
}

function canonicalOrFail(field: string, raw: string): string {
  const c = canonicalLocale(raw)
  if (!c) throw validationFailed({ [field]: [`"${raw}" is not a valid BCP-47 language tag.`] })
  return c
}

export async function addLocale(kernel: Kernel, access: SpaceAccess, input: { code: string; fallback?: string | null }): Promise<LocaleView> {
  const code = canonicalOrFail('code', input.code)
  const fallback = input.fallback == null ? null : canonicalOrFail('fallback', input.fallback)
  if (fallback === code) throw validationFailed({ fallback: ['must be another locale than the one being added.'] })
  try {
    return await transact(kernel, async (tx, emit) => {
      const settings = await localeSettings(tx, access.space.id)
      if (fallback && !settings.codes.includes(fallback)) {
        throw validationFailed({ fallback: [`"${fallback}" is not one of this Space's locales (${settings.codes.join(', ')}).`] })
      }
      const [{ top }] = await tx
        .select({ top: max(spaceLocales.position) })
        .from(spaceLocales)
        .where(eq(spaceLocales.spaceId, access.space.id))
      const [row] = await tx
        .insert(spaceLocales)
        .values({ spaceId: access.space.id, code, fallback, position: (top ?? -1) + 1, createdAt: kernel.clock.now() })
        .returning()
      emit({ type: 'space.locales_changed', spaceId: access.space.id, payload: { space: { slug: access.space.slug } } })
      return { code: row.code, fallback: row.fallback, is_default: code === access.space.defaultLang, position: row.position }
    })
  } catch (err) {
    return uniqueAs('space_locales_space_id_code_pk', () => SpaceErrors.localeExists(`The locale "${code}" already exists in this Space.`))(err)
  }
}

/**
 * Changes an existing locale: its explicit fallback (another locale of the Space, no cycle; null removes it) and its
 * place in the display order (`position`: the 0-based index it moves to; the others keep their order and all
 * positions are renumbered 0…n-1). The default locale's place is free; it stays the default.
 */
export async function updateLocale(
  kernel: Kernel,
  access: SpaceAccess,
  rawCode: string,
  input: { fallback?: string | null; position?: number },
): Promise<LocaleView> {
  const code = canonicalLocale(rawCode)
  if (!code) throw notFound('Locale')
  const fallback = input.fallback === undefined ? undefined : input.fallback === null ? null : canonicalOrFail('fallback', input.fallback)
  return transact(kernel, async (tx, emit) => {
    // Lock the Space's locale rows so two concurrent reorders cannot interleave their renumbering.
    const rows = await tx
      .select({ code: spaceLocales.code, fallback: spaceLocales.fallback, position: spaceLocales.position })
      .from(spaceLocales)
      .where(eq(spaceLocales.spaceId, access.space.id))
      .orderBy(asc(spaceLocales.position), asc(spaceLocales.code))
      .for('update')
    const current = rows.find((r) => r.code === code)
    if (!current) throw notFound('Locale')
    const codes = rows.map((r) => r.code)
    if (fallback !== undefined && fallback !== null) {
      if (fallback === code) throw validationFailed({ fallback: ['must be another locale than this one.'] })
      if (!codes.includes(fallback)) {
        throw validationFailed({ fallback: [`"${fallback}" is not one of this Space's locales (${codes.join(', ')}).`] })
      }
      const fallbacks = new Map(rows.filter((r) => r.fallback).map((r) => [r.code, r.fallback as string]))
      fallbacks.set(code, fallback)
      const seen = new Set([code])
      for (let c = fallbacks.get(code); c; c = fallbacks.get(c)) {
        if (seen.has(c)) {
          throw validationFailed({ fallback: [`"${fallback}" falls back to "${code}" already (${[...seen, c].join(' → ')}); fallbacks cannot form a cycle.`] })
        }
        seen.add(c)
      }
    }
    if (input.position !== undefined && input.position > codes.length - 1) {
      throw validationFailed({ position: [`must be between 0 and ${codes.length - 1} (the Space has ${codes.length} locales).`] })
    }
    let changed = false
    if (fallback !== undefined && fallback !== current.fallback) {
      await tx
        .update(spaceLocales)
        .set({ fallback })
        .where(and(eq(spaceLocales.spaceId, access.space.id), eq(spaceLocales.code, code)))
      current.fallback = fallback
      changed = true
    }
    if (input.position !== undefined) {
      const order = codes.filter((c) => c !== code)
      order.splice(input.position, 0, code)
      // Every row takes its index in the new display order; only rows whose number changes are written.
      for (let i = 0; i < order.length; i++) {
        const row = rows.find((r) => r.code === order[i])!
        if (row.position === i) continue
        await tx
          .update(spaceLocales)
          .set({ position: i })
          .where(and(eq(spaceLocales.spaceId, access.space.id), eq(spaceLocales.code, order[i])))
        if (order[i] === code) current.position = i
        row.position = i
        changed = true
      }
    }
    if (changed) emit({ type: 'space.locales_changed', spaceId: access.space.id, payload: { space: { slug: access.space.slug } } })
    return { code, fallback: current.fallback, is_default: code === access.space.defaultLang, position: current.position }
  })
}

/**
 * Removes a locale. The default locale cannot be removed; locales that fell back to it lose their fallback. Story
 * content in that locale is kept (adding the locale again brings it back) but is no longer served or editable.
 */
export async function removeLocale(kernel: Kernel, access: SpaceAccess, rawCode: string): Promise<void> {
  const code = canonicalLocale(rawCode)
  if (!code) throw notFound('Locale')
  if (code === access.space.defaultLang) {
    throw SpaceErrors.defaultLocale(`"${code}" is the Space's default locale; make another locale the default first.`)
  }
  await transact(kernel, async (tx, emit) => {
    const [row] = await tx
      .delete(spaceLocales)
      .where(and(eq(spaceLocales.spaceId, access.space.id), eq(spaceLocales.code, code)))
      .returning({ code: spaceLocales.code })
    if (!row) throw notFound('Locale')
    await tx
      .update(spaceLocales)
      .set({ fallback: null })
      .where(and(eq(spaceLocales.spaceId, access.space.id), eq(spaceLocales.fallback, code)))
    emit({ type: 'space.locales_changed', spaceId: access.space.id, payload: { space: { slug: access.space.slug } } })
  })
}

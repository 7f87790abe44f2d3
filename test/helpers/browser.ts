/**
 * The one Chromium of the browser tests: Debian's /usr/bin/chromium driven by playwright-core, launched with the same
 * flags everywhere. CI installs it (`apt-get install -y chromium`, .ci/run); where it is missing, the tests that need it
 * skip (`describe.skipIf(!hasChromium)`) and say so loudly (`warnNoChromium`).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** Prints a banner when Chromium is missing: `what` names the tests that are skipped. */
export function warnNoChromium(what: string): void {
  if (hasChromium) return
  const line = '!'.repeat(100)
  console.warn(`\n${line}\n!! SKIPPED: ${what} — no Chromium at ${CHROMIUM}.\n!! Install it with: apt-get install -y chromium\n${line}\n`)
}

/** A headless Chromium; contexts come from `browser.newContext(...)`. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS })
}

/**
 * One persistent context in a fresh profile folder (the embed-script tests: pages of two origins, storage kept across
 * pages). `close` closes it and removes the folder.
 */
export async function launchPersistentChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core')
  const dir = mkdtempSync(join(tmpdir(), 'cs-chromium-'))
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: ['--headless', ...ARGS] })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

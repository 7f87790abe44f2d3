import { featureMessages } from '../../i18n/feature-messages'
import type { MessageKey as ShellKey } from '../../i18n/en'

/** The visual editor's texts: loaded with the screen's chunk, not with the first load (i18n/feature-messages.ts). */
export const en = {
  "visual.toggle": "Visual editor",
  "visual.region": "The site, beside the form",
  "visual.resize": "Resize the site preview (arrow keys)",
  "visual.devices": "Width of the site",
  "visual.device": "{width} px",
  "visual.device.fit": "Fit",
  "visual.connected": "Live: {path}",
  "visual.connecting": "Connecting to the site…",
  "visual.openTab": "Open in a tab",
  "visual.close": "Close",
  "visual.reloadFirst": "Save your changes, then open the visual editor again: the app reloads once to allow this Space’s site in a frame.",
  "visual.noUrl": "This Space has no preview URL yet: an admin sets it in the Space settings.",
  "visual.silent": "The site does not answer the editor. Make sure its pages include the bridge with this Space named, and that the site allows this admin app to frame it (its Content-Security-Policy frame-ancestors, or X-Frame-Options):",
  "visual.frame": "The site: {name}",
}

export const de: Record<keyof typeof en, string> = {
  "visual.toggle": "Visueller Editor",
  "visual.region": "Die Website neben dem Formular",
  "visual.resize": "Größe der Website-Vorschau ändern (Pfeiltasten)",
  "visual.devices": "Breite der Website",
  "visual.device": "{width} px",
  "visual.device.fit": "Anpassen",
  "visual.connected": "Live: {path}",
  "visual.connecting": "Verbindung zur Website…",
  "visual.openTab": "In neuem Tab öffnen",
  "visual.close": "Schließen",
  "visual.reloadFirst": "Speichern Sie Ihre Änderungen und öffnen Sie den visuellen Editor erneut: Die App lädt einmal neu, um die Website dieses Space in einem Rahmen zu erlauben.",
  "visual.noUrl": "Dieser Space hat noch keine Vorschau-URL: Ein Admin legt sie in den Space-Einstellungen fest.",
  "visual.silent": "Die Website antwortet dem Editor nicht. Ihre Seiten müssen das Bridge-Skript mit diesem Space einbinden, und die Website muss dieser Admin-App erlauben, sie einzurahmen (Content-Security-Policy frame-ancestors oder X-Frame-Options):",
  "visual.frame": "Die Website: {name}",
}

/** A key of this feature's catalog or of the shell's. */
export type MessageKey = keyof typeof en | ShellKey

export const { t, fieldErrors } = featureMessages<keyof typeof en>(en, de)

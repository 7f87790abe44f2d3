import type { visualEn } from './visual-en'

/** German messages of visual-en.ts (the type checks that none is missing). */
export const visualDe: Record<keyof typeof visualEn, string> = {
  'visual.toggle': 'Visueller Editor',
  'visual.region': 'Die Website neben dem Formular',
  'visual.resize': 'Größe der Website-Vorschau ändern (Pfeiltasten)',
  'visual.devices': 'Breite der Website',
  'visual.device': '{width} px',
  'visual.device.fit': 'Anpassen',
  'visual.connected': 'Live: {path}',
  'visual.connecting': 'Verbindung zur Website…',
  'visual.openTab': 'In neuem Tab öffnen',
  'visual.close': 'Schließen',
  'visual.reloadFirst': 'Speichern Sie Ihre Änderungen und öffnen Sie den visuellen Editor erneut: Die App lädt einmal neu, um die Website dieses Space in einem Rahmen zu erlauben.',
  'visual.noUrl': 'Dieser Space hat noch keine Vorschau-URL: Ein Admin legt sie in den Space-Einstellungen fest.',
  'visual.silent':
    'Die Website antwortet dem Editor nicht. Ihre Seiten müssen das Bridge-Skript mit diesem Space einbinden, und die Website muss dieser Admin-App erlauben, sie einzurahmen (Content-Security-Policy frame-ancestors oder X-Frame-Options):',
  'visual.frame': 'Die Website: {name}',
}

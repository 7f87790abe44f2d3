import { featureMessages } from '../../i18n/feature-messages'

/** The AI field actions' texts (the Story editor's fields): loaded with the editor's chunk (i18n/feature-messages.ts). */
export const en = {
  "aiField.open": "AI",
  "aiField.openFor": "AI actions for “{field}”",
  "aiField.actions": "AI actions for “{field}”",
  "aiField.write": "Write",
  "aiField.instruction": "What to write",
  "aiField.instructionHint": "For example: a headline about our summer opening hours. The field’s text is replaced.",
  "aiField.shorten": "Shorten",
  "aiField.translate": "Translate",
  "aiField.translateInto": "Translate into",
  "aiField.stop": "Stop",
  "aiField.undo": "Undo the AI change",
  "aiField.streaming": "AI is writing into “{field}”…",
  "aiField.done": "AI wrote into “{field}”: an unsaved change. Review it, then save.",
  "aiField.stopped": "Stopped: what AI wrote so far stays in “{field}”, unsaved.",
  "aiField.undone": "The AI change to “{field}” was undone.",
  "aiField.empty": "The field is empty: there is nothing to shorten or translate.",
  "aiField.failed": "AI could not finish: {message}",
  "aiField.tooLong": "The field is longer than {max} characters: too long to send to AI.",
}

export const de: Record<keyof typeof en, string> = {
  "aiField.open": "KI",
  "aiField.openFor": "KI-Aktionen für „{field}“",
  "aiField.actions": "KI-Aktionen für „{field}“",
  "aiField.write": "Schreiben",
  "aiField.instruction": "Was geschrieben werden soll",
  "aiField.instructionHint": "Zum Beispiel: eine Überschrift zu unseren Sommer-Öffnungszeiten. Der Text des Feldes wird ersetzt.",
  "aiField.shorten": "Kürzen",
  "aiField.translate": "Übersetzen",
  "aiField.translateInto": "Übersetzen in",
  "aiField.stop": "Anhalten",
  "aiField.undo": "KI-Änderung rückgängig machen",
  "aiField.streaming": "KI schreibt in „{field}“…",
  "aiField.done": "KI hat in „{field}“ geschrieben: eine ungespeicherte Änderung. Prüfen Sie sie, dann speichern Sie.",
  "aiField.stopped": "Angehalten: was die KI bisher geschrieben hat, bleibt ungespeichert in „{field}“.",
  "aiField.undone": "Die KI-Änderung an „{field}“ wurde rückgängig gemacht.",
  "aiField.empty": "Das Feld ist leer: es gibt nichts zu kürzen oder zu übersetzen.",
  "aiField.failed": "Die KI konnte nicht fertig werden: {message}",
  "aiField.tooLong": "Das Feld ist länger als {max} Zeichen: zu lang, um es an die KI zu senden.",
}

export const { t } = featureMessages<keyof typeof en>(en, de)

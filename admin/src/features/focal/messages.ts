import { featureMessages } from '../../i18n/feature-messages'

/** The asset dialog's focal point and crop texts: loaded with the assets screen's chunk (i18n/feature-messages.ts). */
export const en = {
  "focal.title": "Focal point and crop",
  "focal.intro": "Click the image where its subject is. Cuts to another shape (a square, a wide banner) keep that point in view.",
  "focal.marker": "Focal point: {x} % from the left, {y} % from the top. Arrow keys move it, with Shift in larger steps.",
  "focal.imageAlt": "The whole image, to pick the focal point on",
  "focal.position": "Focal point: {x} % × {y} %",
  "focal.unset": "No focal point: cuts keep the centre.",
  "focal.reset": "Back to the centre",
  "focal.crop": "Crop the image",
  "focal.cropHint": "In percent of the whole image. Every size and format is cut from this part.",
  "focal.cropX": "Left (%)",
  "focal.cropY": "Top (%)",
  "focal.cropWidth": "Width (%)",
  "focal.cropHeight": "Height (%)",
  "focal.preview": "Preview",
  "focal.square": "Square",
  "focal.wide": "Wide (16:9)",
  "focal.previewAlt": "{shape} cut of the image",
  "focal.save": "Save focal point and crop",
  "focal.saved": "Saved. New image URLs follow it.",
  "focal.error.crop": "The crop must stay inside the image and have a width and height.",
}

export const de: Record<keyof typeof en, string> = {
  "focal.title": "Fokuspunkt und Zuschnitt",
  "focal.intro": "Klicken Sie ins Bild, wo sein Motiv ist. Zuschnitte auf eine andere Form (quadratisch, ein breites Banner) behalten diesen Punkt im Blick.",
  "focal.marker": "Fokuspunkt: {x} % von links, {y} % von oben. Pfeiltasten verschieben ihn, mit Umschalt in größeren Schritten.",
  "focal.imageAlt": "Das ganze Bild, um den Fokuspunkt zu wählen",
  "focal.position": "Fokuspunkt: {x} % × {y} %",
  "focal.unset": "Kein Fokuspunkt: Zuschnitte behalten die Mitte.",
  "focal.reset": "Zurück zur Mitte",
  "focal.crop": "Bild zuschneiden",
  "focal.cropHint": "In Prozent des ganzen Bildes. Jede Größe und jedes Format wird aus diesem Teil geschnitten.",
  "focal.cropX": "Links (%)",
  "focal.cropY": "Oben (%)",
  "focal.cropWidth": "Breite (%)",
  "focal.cropHeight": "Höhe (%)",
  "focal.preview": "Vorschau",
  "focal.square": "Quadratisch",
  "focal.wide": "Breit (16:9)",
  "focal.previewAlt": "Zuschnitt {shape} des Bildes",
  "focal.save": "Fokuspunkt und Zuschnitt speichern",
  "focal.saved": "Gespeichert. Neue Bild-URLs folgen ihm.",
  "focal.error.crop": "Der Zuschnitt muss im Bild liegen und eine Breite und Höhe haben.",
}

export const { t, fieldErrors } = featureMessages<keyof typeof en>(en, de)

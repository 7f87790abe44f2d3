/** CSV exports (subscribers, form submissions): what every cell goes through. */

/** Neutralises spreadsheet formulas: a cell beginning with = + - @, tab or CR gets a leading apostrophe. */
export function safeCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
}

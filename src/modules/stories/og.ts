// The Open Graph card of a Story: a 1200×630 SVG with the headline (or name) and the Space name.

const escapeXml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)

// Characters XML 1.0 does not allow at all, even escaped.
const stripInvalid = (s: string) => s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')

/** Greedy word wrap by character count (no font metrics on the server); the last line ends in … when cut. */
export function wrapText(text: string, perLine: number, maxLines: number): string[] {
  const words = text.trim().split(/\s+/).filter(Boolean)
  const lines: string[] = []
  let line = ''
  for (let i = 0; i < words.length; i++) {
    let w = words[i]
    while (w.length > perLine) {
      if (line) {
        lines.push(line)
        line = ''
      }
      lines.push(w.slice(0, perLine))
      w = w.slice(perLine)
    }
    const candidate = line ? `${line} ${w}` : w
    if (candidate.length <= perLine) line = candidate
    else {
      lines.push(line)
      line = w
    }
  }
  if (line) lines.push(line)
  if (lines.length > maxLines) {
    const kept = lines.slice(0, maxLines)
    const last = kept[maxLines - 1]
    kept[maxLines - 1] = `${last.length >= perLine ? last.slice(0, perLine - 1) : last}…`
    return kept
  }
  return lines
}

export function ogCardSvg(input: { title: string; spaceName: string; lang: string }): string {
  const lines = wrapText(stripInvalid(input.title), 28, 4)
  const fontSize = lines.length > 3 ? 60 : 72
  const lineHeight = Math.round(fontSize * 1.2)
  const top = 315 - ((lines.length - 1) * lineHeight) / 2
  const tspans = lines
    .map((l, i) => `<tspan x="80" y="${Math.round(top + i * lineHeight)}">${escapeXml(l)}</tspan>`)
    .join('')
  const space = escapeXml(wrapText(stripInvalid(input.spaceName), 48, 1)[0] ?? '')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630" viewBox="0 0 1200 630" xml:lang="${escapeXml(input.lang)}">` +
    `<rect width="1200" height="630" fill="#0f172a"/>` +
    `<rect x="0" y="0" width="16" height="630" fill="#38bdf8"/>` +
    `<text font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" font-size="${fontSize}" font-weight="700" fill="#f8fafc" dominant-baseline="middle">${tspans}</text>` +
    `<text x="80" y="570" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" font-size="32" fill="#94a3b8">${space}</text>` +
    `</svg>`
  )
}

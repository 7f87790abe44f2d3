// Typo tolerance per query word (spec 4.4).
//
// The spec wants a budget per word by its length: each query word is expanded to the vocabulary words within its own
// budget (vocabulary.ts), whose postings are then read from the index (engine.ts). A typo is an inserted, missing or replaced character, or two adjacent characters swapped.

/** Typos a query word may carry (spec 4.4): up to 4 characters none, 5 to 8 one, 9 or more two. */
export function typoBudget(word: string): 0 | 1 | 2 {
  const n = codePointLength(word)
  return n <= 4 ? 0 : n <= 8 ? 1 : 2
}

function codePointLength(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0xd800 || c > 0xdbff) n++
  }
  return n
}

/** Optimal string alignment distance, by definition (tests check vocabulary.ts against it). */
export function editDistance(a: string, b: string): number {
  const m = a.length
  const n = b.length
  const t: number[][] = Array.from({ length: m + 1 }, (_, i) => Array.from({ length: n + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      t[i][j] = Math.min(t[i - 1][j] + 1, t[i][j - 1] + 1, t[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) t[i][j] = Math.min(t[i][j], t[i - 2][j - 2] + 1)
    }
  }
  return t[m][n]
}

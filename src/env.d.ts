// Files imported `with { type: 'text' }` so the compiled executable carries them.
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*/assets/embed.js' {
  const text: string
  export default text
}

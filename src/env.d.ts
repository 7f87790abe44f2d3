// Files imported `with { type: 'text' }` so the compiled executable carries them.
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*/assets/embed.js' {
  const text: string
  export default text
}
declare module '*/assets/service-admin.js' {
  const text: string
  export default text
}
// Files imported `with { type: 'file' }`: a path that works in the compiled executable too.
declare module '*/redoc.standalone.js' {
  const path: string
  export default path
}

// bun run db:generate [drizzle-kit options, e.g. --name <what>]: drizzle-kit generate with the options given, then
// db/migrations/index.ts (scripts/migrations-index.ts). The options go to drizzle-kit: a package.json script of the
// form `drizzle-kit generate && bun scripts/migrations-index.ts` would hand them to the second command instead.
const kit = Bun.spawnSync(['bunx', 'drizzle-kit', 'generate', ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'inherit'] })
if (kit.exitCode !== 0) process.exit(kit.exitCode ?? 1)
await import('./migrations-index')
export {}

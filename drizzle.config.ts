import { defineConfig } from 'drizzle-kit'

// The schema is collected from where the tables live: the kernel's own (src/kernel/tables/) and each module's
// src/modules/<name>/tables.ts. A new module's tables.ts is picked up without a line here.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/kernel/tables/index.ts', './src/modules/*/tables.ts'],
  out: './db/migrations',
})

// Loaded by bunfig.toml before every test file.
import { setDefaultTimeout } from 'bun:test'

process.env.LOG_LEVEL ??= 'silent'
// Tests start servers and databases: plain `bun test` gets the same 60 s bound as `bun test --timeout 60000`.
setDefaultTimeout(60_000)

// Loaded by bunfig.toml before every test file.
process.env.LOG_LEVEL ??= 'silent'
// The per-test timeout is not set here: `setDefaultTimeout` applies to the file being loaded, so a preload would
// give it to the first test file only. Every test file sets its own (test/test-files.test.ts checks that).

import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createBackup } from '../../kernel/backup'
import type { Kernel } from '../../kernel/kernel'
import { SERVICE_VERSION } from '../system/service'

/** Names of scheduled backups: the UTC time they were taken, so names sort by age. */
const SCHEDULED_NAME = /^content-service-backup-\d{8}T\d{6}Z\.tar\.gz$/

export function scheduledBackupName(at: Date): string {
  return `content-service-backup-${at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.tar.gz`
}

/**
 * Takes one backup into BACKUP_DIR (written aside, then renamed: a file there is always whole), then deletes the
 * oldest scheduled backups beyond BACKUP_KEEP. Returns the new file's path.
 */
export async function takeScheduledBackup(kernel: Kernel): Promise<string> {
  const { backupDir, backupKeep, databaseUrl } = kernel.config
  const at = kernel.clock.now()
  const bytes = await createBackup(kernel.db, SERVICE_VERSION, { databaseUrl, clockNow: at })
  mkdirSync(backupDir, { recursive: true, mode: 0o700 })
  const file = join(backupDir, scheduledBackupName(at))
  const partial = `${file}.partial`
  try {
    await Bun.write(partial, bytes)
    chmodSync(partial, 0o600)
    renameSync(partial, file)
  } finally {
    rmSync(partial, { force: true })
  }
  const kept = readdirSync(backupDir).filter((n) => SCHEDULED_NAME.test(n)).sort()
  const removed = kept.slice(0, Math.max(0, kept.length - backupKeep))
  for (const name of removed) rmSync(join(backupDir, name), { force: true })
  kernel.logger.info('backup written', { file, bytes: bytes.byteLength, removed: removed.length })
  return file
}

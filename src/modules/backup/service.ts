import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { writeBackupFile } from '../../kernel/backup'
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
  mkdirSync(backupDir, { recursive: true, mode: 0o700 })
  const file = join(backupDir, scheduledBackupName(at))
  // Streamed into `.partial`, then renamed: a file there is always whole.
  const bytes = await writeBackupFile(kernel.db, SERVICE_VERSION, file, { databaseUrl, clockNow: at, s3: kernel.config.s3 })
  const kept = readdirSync(backupDir).filter((n) => SCHEDULED_NAME.test(n)).sort()
  const removed = kept.slice(0, Math.max(0, kept.length - backupKeep))
  for (const name of removed) rmSync(join(backupDir, name), { force: true })
  kernel.logger.info('backup written', { file, bytes, removed: removed.length })
  return file
}

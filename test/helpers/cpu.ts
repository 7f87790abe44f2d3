/**
 * CPU time this process spends, for tests that check that something is cheap ("answers at once", "no catastrophic
 * regex"). Wall-clock time measures the machine's load as much as our code: on a busy machine (CI, several test runs
 * side by side) a cheap request can wait seconds for a core, while the CPU time it costs stays the same. This counts
 * every thread of the process (the password hasher's pool, PGlite, GC), so background work adds a little, never less.
 */
export class CpuTimer {
  private start = process.cpuUsage()

  /** Milliseconds of CPU (user + system) since the timer was made. */
  ms(): number {
    const d = process.cpuUsage(this.start)
    return (d.user + d.system) / 1000
  }
}

export const cpuTimer = () => new CpuTimer()

import { readFileSync } from 'node:fs';
import { isErrnoException } from './errors.js';

/**
 * True while a process with this pid exists on this machine: signal 0 checks without signalling,
 * and a process we may not signal (EPERM) exists too; ESRCH means there is none. The caller rules
 * out pids that name no single process (0 and negatives address process groups).
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrnoException(error, 'EPERM');
  }
}

/** A file under /proc as text, or undefined where there is none (not Linux, or the process is gone): the caller falls back. */
export function readProcText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat), undefined off Linux or when gone. */
export function processStartTime(pid: number): number | undefined {
  const stat = readProcText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const value = Number(fields[19]);
  return Number.isFinite(value) ? value : undefined;
}

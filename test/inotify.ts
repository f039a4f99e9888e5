// Linux gives each user a fixed number of inotify instances (fs.inotify.max_user_instances, often
// 128), shared by every process of that user: on a shared machine another job can hold them all,
// and then any file watcher fails to start (EMFILE) whatever the code under test does. Tests that
// watch files skip, saying so, when that is why they cannot run.
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import type { TestContext } from 'vitest';

/** Fewer instances left than this and a test that starts watchers (a few processes) may find none. */
const MARGIN = 4;

/** How many inotify instances this user may still make; undefined where that cannot be read (not Linux). */
export function inotifyInstancesLeft(): number | undefined {
  let max: number;
  try {
    max = Number(readFileSync('/proc/sys/fs/inotify/max_user_instances', 'utf8'));
  } catch {
    return undefined; // no /proc: not Linux, nothing to count
  }
  const uid = process.getuid?.();
  let used = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${pid}`).uid !== uid) continue; // another user's count
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify') used++;
        } catch {
          // closed while counted: not in use
        }
      }
    } catch {
      // the process ended while counted: its instances are free again
    }
  }
  return max - used;
}

/** Why file watching may fail here for want of inotify instances, not for a fault; undefined when there are enough. */
export function inotifyShortage(): string | undefined {
  const left = inotifyInstancesLeft();
  if (left === undefined || left >= MARGIN) return undefined;
  return `only ${Math.max(0, left)} of this user's inotify instances are left (fs.inotify.max_user_instances; other processes hold the rest), so file watchers cannot start: run it when they are free, or raise the limit (sysctl fs.inotify.max_user_instances=1024)`;
}

/** Skip the running test, saying why, when inotify instances have run out. */
function skipOnShortage(context: TestContext): void {
  const shortage = inotifyShortage();
  if (shortage === undefined) return;
  console.warn(`SKIPPED: ${context.task.name}: ${shortage}`);
  context.skip(shortage);
}

/**
 * A test that watches files: skipped (loudly) instead of run when inotify instances have run out,
 * and skipped instead of failed when they ran out while it ran — the failure then says nothing of
 * the code. `it('…', needsInotify(async () => { … }))`.
 */
export function needsInotify(body: (context: TestContext) => Promise<void>): (context: TestContext) => Promise<void> {
  return async (context) => {
    skipOnShortage(context);
    try {
      await body(context);
    } catch (error) {
      skipOnShortage(context);
      throw error;
    }
  };
}

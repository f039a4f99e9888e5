/** Something holding writes it has not made yet. */
export interface Unwritten {
  /** Make the writes now (a store that writes synchronously has made them when this returns). */
  flush(): unknown;
}

const unwritten = new Set<Unwritten>();
let hooked = false;

/**
 * Have `item` flushed before the process exits, unless `written` says it already was: on
 * `beforeExit` (which lets an asynchronous write, a database's, finish) and on `exit` (after
 * `process.exit`, where only a synchronous write still happens). One pair of listeners for every
 * item of the process, however many there are.
 */
export function flushBeforeExit(item: Unwritten): void {
  unwritten.add(item);
  if (hooked) return;
  hooked = true;
  const flushAll = (): void => {
    for (const each of unwritten) void each.flush();
  };
  process.on('beforeExit', flushAll);
  process.once('exit', flushAll);
}

/** `item` has nothing unwritten any more. */
export function written(item: Unwritten): void {
  unwritten.delete(item);
}

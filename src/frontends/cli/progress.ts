import type { SyncEvent } from '../../engine/sync.js';

const WIDTH = 28;

/**
 * A one-line progress bar for syncs, drawn on a terminal only (never into pipes or logs) and
 * erased when the sync ends, so the summary line stands alone.
 */
export function progressBar(stream: NodeJS.WriteStream): ((event: SyncEvent) => void) | undefined {
  if (!stream.isTTY) return undefined;
  let lastDraw = 0;
  return (event) => {
    const columns = stream.columns || 80;
    let line: string;
    if (event.type === 'scan') line = `scanning… ${event.files} files`;
    else if (event.type === 'index') {
      const now = Date.now();
      if (now - lastDraw < 50 && event.done !== 0) return;
      lastDraw = now;
      const ratio = event.total === 0 ? 1 : event.done / event.total;
      const filled = Math.round(ratio * WIDTH);
      line = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${event.done}/${event.total} ${event.path}`;
    } else if (event.type === 'write') line = 'writing index…';
    else line = '';
    stream.write(`\r\u001b[2K${line.slice(0, columns - 1)}`);
    if (event.type === 'done') stream.write('\r\u001b[2K');
  };
}

import type { SyncEvent } from '../../protocol/index.js';

const WIDTH = 28;

/** A progress bar: the sink for sync events, and `clear` to erase it once the command is done. */
export interface ProgressBar {
  readonly onEvent: (event: SyncEvent) => void;
  clear(): void;
}

/**
 * A one-line progress bar for syncs, drawn on a terminal only (never into pipes or logs) and
 * erased when the command ends, so the summary line stands alone.
 */
export function progressBar(stream: NodeJS.WriteStream): ProgressBar | undefined {
  if (!stream.isTTY) return undefined;
  let lastDraw = 0;
  let drawn = false;
  let embedStarted = 0;
  return {
    onEvent(event) {
      const columns = stream.columns || 80;
      let line: string;
      if (event.type === 'scan') line = `scanning… ${event.files} files to read`;
      else if (event.type === 'index') {
        const now = Date.now();
        if (now - lastDraw < 50 && event.done !== 0) return;
        lastDraw = now;
        const ratio = event.total === 0 ? 1 : event.done / event.total;
        const filled = Math.round(ratio * WIDTH);
        line = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${event.done}/${event.total} ${event.path}`;
      } else if (event.type === 'train') line = `learning the embedding table from ${event.chunks} chunks…`;
      else if (event.type === 'embed') {
        const now = Date.now();
        if (event.done === 0) embedStarted = now;
        if (now - lastDraw < 50 && event.done !== 0 && event.done !== event.total) return;
        lastDraw = now;
        const ratio = event.total === 0 ? 1 : event.done / event.total;
        const filled = Math.round(ratio * WIDTH);
        // The ETA from the rate so far: embedding runs at a steady pace, unlike reading files.
        const elapsed = (now - embedStarted) / 1000;
        const eta = event.done > 0 && elapsed > 1 ? ` ETA ${formatSeconds((elapsed / event.done) * (event.total - event.done))}` : '';
        line = `embedding [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${event.done}/${event.total} chunks${eta}`;
      } else if (event.type === 'graph') {
        const ratio = event.total === 0 ? 1 : event.done / event.total;
        const filled = Math.round(ratio * WIDTH);
        line = `nearest-neighbour graph [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${event.done}/${event.total} vectors`;
      } else line = 'writing index…';
      stream.write(`\r\u001b[2K${line.slice(0, columns - 1)}`);
      drawn = true;
    },
    clear() {
      if (drawn) stream.write('\r\u001b[2K');
      drawn = false;
    },
  };
}

/** `42s`, `3m05s`. */
function formatSeconds(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

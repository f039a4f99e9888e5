export type Level = 'debug' | 'info' | 'warn' | 'error';

/** A structured logger writing one JSON line per event. */
export function createLogger(level: Level = 'info') {
  const order: Level[] = ['debug', 'info', 'warn', 'error'];
  const write = (at: Level, message: string, fields: Record<string, unknown> = {}) => {
    if (order.indexOf(at) < order.indexOf(level)) return;
    process.stdout.write(`${JSON.stringify({ level: at, message, ...fields, time: new Date().toISOString() })}\n`);
  };
  return { debug: write.bind(null, 'debug'), info: write.bind(null, 'info'), warn: write.bind(null, 'warn'), error: write.bind(null, 'error') };
}

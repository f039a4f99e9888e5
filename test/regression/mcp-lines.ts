import { runCli } from '../helpers.js';

/** The initialize request an MCP session starts with. */
const INITIALIZE = { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'repodex-test', version: '1' } } };

/** One message `serve --mcp` wrote. */
export interface McpReply {
  readonly id?: string | number | null;
  readonly result?: { structuredContent?: { ok: boolean; warnings: string[]; error?: { code: string; message: string } }; content?: { text: string }[]; isError?: boolean; tools?: { name: string; inputSchema: Record<string, unknown> }[] };
  readonly error?: { code: number; message: string };
}

/**
 * Send raw lines (strings as they are, objects as JSON) to `repodex serve --mcp` after an
 * initialize, close its input and return every reply but the initialize answer: for what an SDK
 * client cannot send (lines that are not JSON, malformed calls).
 */
export function mcpLines(root: string, lines: readonly (string | Buffer | Record<string, unknown>)[], flags: readonly string[] = []): McpReply[] {
  const parts = [INITIALIZE, { jsonrpc: '2.0', method: 'notifications/initialized' }, ...lines].map((line) =>
    Buffer.isBuffer(line) ? line : Buffer.from(typeof line === 'string' ? line : JSON.stringify(line)),
  );
  const input = Buffer.concat(parts.flatMap((part) => [part, Buffer.from('\n')]));
  const run = runCli(['serve', '--mcp', '--root', root, ...flags], { input });
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as McpReply)
    .filter((reply) => reply.id !== 'init');
}

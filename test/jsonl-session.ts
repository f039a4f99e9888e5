import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { CLI } from './helpers.js';

/** A `repodex serve --stdio` session on a repository: one request line in, one response line out. */
export class JsonlSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(repo: string, env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [CLI, 'serve', '--stdio', '--root', repo], { env: { ...process.env, NO_COLOR: '1', ...env } });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let newline = this.buffer.indexOf('\n'); newline >= 0; newline = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        this.waiting.shift()?.(line);
      }
    });
  }

  /** Send one request; resolves to its response line. */
  request(body: Record<string, unknown>): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${JSON.stringify(body)}\n`);
    });
  }

  /** End the input and wait for the server to exit. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

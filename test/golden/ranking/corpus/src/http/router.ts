/** Routes requests to handlers by method and path pattern (`/users/:id`). */
export class Router {
  private readonly routes: { method: string; pattern: RegExp; keys: string[]; handler: Handler }[] = [];

  add(method: string, path: string, handler: Handler): this {
    const keys: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, key: string) => { keys.push(key); return '([^/]+)'; })}$`);
    this.routes.push({ method, pattern, keys, handler });
    return this;
  }

  /** The handler and path parameters for a request, or undefined for a 404. */
  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const found = route.pattern.exec(path);
      if (!found) continue;
      const params = Object.fromEntries(route.keys.map((key, i) => [key, decodeURIComponent(found[i + 1]!)]));
      return { handler: route.handler, params };
    }
    return undefined;
  }
}

export type Handler = (request: Request, params: Record<string, string>) => Promise<Response>;

import { retry } from '../util/retry';

/** An HTTP client that retries failed requests with exponential backoff. */
export class HttpClient {
  constructor(private readonly baseUrl: string, private readonly attempts = 3) {}

  async getJson<T>(path: string): Promise<T> {
    const response = await retry(() => fetch(new URL(path, this.baseUrl)), { attempts: this.attempts });
    if (!response.ok) throw new Error(`GET ${path} failed with status ${response.status}`);
    return (await response.json()) as T;
  }
}

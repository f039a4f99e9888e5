/** Run `task` until it succeeds, waiting longer after each failure (exponential backoff with jitter). */
export async function retry<T>(task: () => Promise<T>, options: { attempts: number; baseDelayMs?: number }): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < options.attempts; attempt++) {
    try {
      return await task();
    } catch (error) {
      lastError = error;
      const delay = (options.baseDelayMs ?? 100) * 2 ** attempt * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  throw lastError;
}

/** Read a request body as JSON, refusing bodies over the limit. */
export async function readJsonBody(request: Request, limitBytes = 1_000_000): Promise<unknown> {
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > limitBytes) throw new PayloadTooLargeError(length, limitBytes);
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestError('request body is not valid JSON');
  }
}

export class PayloadTooLargeError extends Error {
  constructor(readonly size: number, readonly limit: number) {
    super(`payload of ${size} bytes is over the ${limit}-byte limit`);
  }
}

export class BadRequestError extends Error {}

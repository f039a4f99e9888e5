import { retry } from '../src/util/retry';

test('retries until the task succeeds', async () => {
  let calls = 0;
  const value = await retry(async () => { if (++calls < 3) throw new Error('flaky'); return 'ok'; }, { attempts: 5, baseDelayMs: 1 });
  expect(value).toBe('ok');
});

import { Router } from '../src/http/router';

test('matches a route with a path parameter', async () => {
  const router = new Router().add('GET', '/users/:id', async (_request, params) => new Response(params.id));
  expect(router.match('GET', '/users/42')?.params).toEqual({ id: '42' });
});

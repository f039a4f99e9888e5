/** Migrations are bundled as text (esbuild's text loader; the test runner's plugin in vitest.config.ts). */
declare module '*.sql' {
  const text: string;
  export default text;
}

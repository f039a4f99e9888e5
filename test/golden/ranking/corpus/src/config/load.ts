import { readFileSync } from 'node:fs';

export interface AppConfig {
  port: number;
  databaseUrl: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

/** Load the configuration file, then let environment variables override single settings. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): AppConfig {
  const fromFile = JSON.parse(readFileSync(path, 'utf8')) as Partial<AppConfig>;
  return {
    port: Number(env.PORT ?? fromFile.port ?? 8080),
    databaseUrl: env.DATABASE_URL ?? fromFile.databaseUrl ?? 'postgres://localhost/app',
    logLevel: (env.LOG_LEVEL as AppConfig['logLevel']) ?? fromFile.logLevel ?? 'info',
  };
}

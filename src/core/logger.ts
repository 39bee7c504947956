import { pino, type Logger } from 'pino';

/** Logs go to stderr: stdout carries the stdio transport. Secrets are redacted wherever they appear in log objects. */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      name: 'browser-session-mcp',
      level,
      redact: {
        paths: [
          'apiKey',
          '*.apiKey',
          '*.*.apiKey',
          'headers["x-svc-api-key"]',
          'headers.authorization',
          '*.headers["x-svc-api-key"]',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

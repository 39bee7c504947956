import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/core/errors.js';
import { ROOT } from './fixtures/mcp-stdio.js';

describe('docs/http.md', () => {
  it('lists every error code in the row of its HTTP status', () => {
    const rows = new Map(
      [...readFileSync(`${ROOT}docs/http.md`, 'utf8').matchAll(/^\| (\d{3}) \| (.*) \|$/gm)].map((row) => [Number(row[1]), row[2]!]),
    );
    const missing = Object.entries(ERROR_STATUS)
      .filter(([code, status]) => !rows.get(status)?.includes(`\`${code}\``))
      .map(([code, status]) => `${status} ${code}`);
    expect(missing).toEqual([]);
  });
});

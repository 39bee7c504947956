import { z } from 'zod';

/**
 * Arguments a model got slightly wrong, made right where only one reading exists: a number where a string is expected
 * (a ref written as 12), "true"/"false" for a boolean, a numeric string for a number; inside arrays and objects too.
 * Anything else is left for validation to report.
 */
export function coerceArguments(schema: z.ZodType, value: unknown): Record<string, unknown> {
  return coerce(schema, value) as Record<string, unknown>;
}

function coerce(schema: z.ZodType, value: unknown): unknown {
  const base = unwrap(schema);
  if (base instanceof z.ZodString && typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (base instanceof z.ZodBoolean && (value === 'true' || value === 'false')) return value === 'true';
  if (base instanceof z.ZodNumber && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (base instanceof z.ZodArray && Array.isArray(value)) return value.map((item) => coerce(base.element as z.ZodType, item));
  if (base instanceof z.ZodObject && value && typeof value === 'object' && !Array.isArray(value)) {
    const shape = base.shape as Record<string, z.ZodType>;
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, shape[key] ? coerce(shape[key], item) : item]),
    );
  }
  return value;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault)
    current = current.unwrap() as z.ZodType;
  return current;
}

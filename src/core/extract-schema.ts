import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ServiceError } from './errors.js';
import { checkDepth } from './validation.js';

/**
 * The JSON Schema side of extract: normalising the caller's schema, wrapping non-object schemas, the model's view of
 * it (URL fields answered with element refs), validation, and mapping refs back to real hrefs.
 */
type Json = Record<string, unknown>;

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => void;
const URL_FORMATS = new Set(['uri', 'url', 'iri']);
/** Key of a non-object result, for the model and in every door's answer (`wrapped: true`). */
export const WRAPPED_RESULT_KEY = 'value';
/** Annotation keywords common in real-world schemas (OpenAPI, zod) that Ajv does not know; dropped before compiling. */
const DROPPED = new Set(['example', 'discriminator', 'xml', 'externalDocs', '$schema', '$id', 'id']);
const SCHEMA_KEYWORDS = ['type', 'properties', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'items'];

/** One Ajv per schema: Ajv caches every schema it compiled, which would grow without bound across calls. */
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    strictTuples: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  // Links are mapped from the page's real hrefs, which are absolute URLs even where RFC 3986 is stricter (IRIs, localhost).
  for (const format of URL_FORMATS) ajv.addFormat(format, (value: string) => URL.canParse(value));
  return ajv;
}

export interface PreparedSchema {
  /** The caller's schema, normalised, wrapped in an object when it was not one. */
  schema: Json;
  /** What the model is asked for: the same schema with URL fields as element-ref strings. */
  modelSchema: Json;
  wrapped: boolean;
  hasUrlFields: boolean;
  validate: ValidateFunction;
  validateModel: ValidateFunction;
}

/** Checks and prepares a caller's JSON Schema; anything that is not one is an `invalid_argument`. */
export function prepareSchema(input: Json): PreparedSchema {
  checkDepth(input, 'schema');
  const normalised = normalise(input) as Json;
  if (!SCHEMA_KEYWORDS.some((key) => key in normalised)) {
    throw new ServiceError(
      'invalid_argument',
      `schema is not a JSON Schema: it needs one of ${SCHEMA_KEYWORDS.join(', ')} at the top, e.g. {"type":"object","properties":{...}}.`,
    );
  }
  const isObject = !needsWrapping(normalised);
  let schema = normalised;
  if (!isObject) {
    // Providers want an object at the top; $defs stay at the root so "#/$defs/..." refs still resolve.
    const { $defs, definitions, ...rest } = normalised;
    schema = { type: 'object', properties: { [WRAPPED_RESULT_KEY]: rest }, required: [WRAPPED_RESULT_KEY], additionalProperties: false };
    if ($defs) schema.$defs = $defs;
    if (definitions) schema.definitions = definitions;
  }
  const modelSchema = toModelSchema(schema) as Json;
  return {
    schema,
    modelSchema,
    wrapped: !isObject,
    hasUrlFields: JSON.stringify(modelSchema) !== JSON.stringify(schema),
    validate: compile(newAjv(), schema),
    validateModel: compile(newAjv(), modelSchema),
  };
}

/** Providers want an object at the top: anything else travels as {value: ...}. */
export function needsWrapping(schema: Record<string, unknown>): boolean {
  return !(schema.type === 'object' && !schema.anyOf && !schema.oneOf);
}

/** A result as an object: `{value: result}` when the schema was not an object schema. */
export function wrapResult(result: unknown, wrapped: boolean): Record<string, unknown> {
  return wrapped ? { [WRAPPED_RESULT_KEY]: result } : (result as Record<string, unknown>);
}

export function unwrap(prepared: PreparedSchema, value: Record<string, unknown>): unknown {
  return prepared.wrapped ? value[WRAPPED_RESULT_KEY] : value;
}

function compile(ajv: Ajv2020, schema: Json): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw new ServiceError('invalid_argument', `schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
}

/** Subschema positions of JSON Schema 2020-12: maps of schemas, arrays of schemas, single schemas. */
const MAP_KEYS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LIST_KEYS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const ONE_KEYS = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];

/** Applies `fn` to a schema node after rewriting its subschemas. */
function mapSchema(node: unknown, fn: (node: Json) => Json): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const out: Json = { ...(node as Json) };
  for (const key of MAP_KEYS) {
    const value = out[key];
    if (value && typeof value === 'object' && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSchema(v, fn)]));
  }
  for (const key of LIST_KEYS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((v) => mapSchema(v, fn));
  for (const key of ONE_KEYS) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((v) => mapSchema(v, fn));
    else if (out[key] !== undefined) out[key] = mapSchema(out[key], fn);
  }
  return fn(out);
}

/** OpenAPI `nullable: true` becomes a null type; vendor extensions and unknown annotations go. */
function normalise(schema: Json): unknown {
  return mapSchema(schema, (node) => {
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) if (!DROPPED.has(key) && !key.startsWith('x-') && key !== 'nullable') out[key] = value;
    if (node.nullable === true) {
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      if (out.type === undefined && out.enum === undefined) return { anyOf: [out, { type: 'null' }] };
    }
    return out;
  });
}

function isUrlField(node: Json): boolean {
  const types = Array.isArray(node.type) ? node.type : [node.type];
  return typeof node.format === 'string' && URL_FORMATS.has(node.format) && types.includes('string');
}

const REF_HINT = 'Answer with the element ref of the link in the page text (the id in [brackets], e.g. "12"), not with a URL.';

function toModelSchema(schema: Json): unknown {
  return mapSchema(schema, (node) => {
    if (!isUrlField(node)) return node;
    const { format: _format, pattern: _pattern, minLength: _min, maxLength: _max, ...rest } = node;
    return { ...rest, description: rest.description ? `${String(rest.description)} ${REF_HINT}` : REF_HINT };
  });
}

/** Readable validation errors, one per line, with the JSON pointer of each value. */
export function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => {
    const where = error.instancePath || '(root)';
    const extra =
      error.keyword === 'additionalProperties'
        ? ` "${String((error.params as { additionalProperty?: string }).additionalProperty)}"`
        : error.keyword === 'enum'
          ? `: ${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)}`
          : '';
    return `${where}: ${error.message ?? error.keyword}${extra}`;
  });
}

/**
 * Replaces the element refs the model gave for URL fields with their real hrefs. A value that is neither a known link
 * ref nor one of the page's own hrefs is reported, never passed through.
 */
export function mapUrlRefs(
  value: unknown,
  schema: Json,
  hrefOf: (ref: string) => string | undefined,
  knownHrefs: Set<string>,
): { value: unknown; errors: string[] } {
  const errors: string[] = [];
  const walk = (v: unknown, node: unknown, path: string, depth: number): unknown => {
    const s = resolve(node, schema);
    if (!s || depth > 64) return v;
    if (typeof v === 'string' && (isUrlField(s) || anyBranch(s, schema, isUrlField))) {
      const ref = v.trim().replace(/^\[|\]$/g, '');
      const href = hrefOf(ref);
      if (href) return href;
      if (knownHrefs.has(v)) return v;
      errors.push(
        `${path || '(root)'}: "${v.slice(0, 80)}" is not the ref of a link in the page text; answer with a link's ref like "12", or null/omit it if there is none`,
      );
      return v;
    }
    if (Array.isArray(v)) {
      const items = s.items ?? objectBranch(s, schema)?.items;
      return v.map((item, i) => walk(item, items, `${path}/${i}`, depth + 1));
    }
    if (v && typeof v === 'object') {
      const target = s.properties ? s : objectBranch(s, schema);
      if (!target) return v;
      const properties = (target.properties ?? {}) as Json;
      return Object.fromEntries(
        Object.entries(v).map(([k, item]) => [k, k in properties ? walk(item, properties[k], `${path}/${k}`, depth + 1) : item]),
      );
    }
    return v;
  };
  return { value: walk(value, schema, '', 0), errors };
}

function branches(node: Json, root: Json): Json[] {
  return ((node.anyOf ?? node.oneOf ?? node.allOf ?? []) as unknown[]).map((b) => resolve(b, root)).filter((b): b is Json => !!b);
}

function anyBranch(node: Json, root: Json, test: (node: Json) => boolean): boolean {
  return branches(node, root).some(test);
}

function objectBranch(node: Json, root: Json): Json | undefined {
  return branches(node, root).find((b) => b.properties || b.items);
}

function resolve(node: unknown, root: Json, depth = 0): Json | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const s = node as Json;
  if (typeof s.$ref !== 'string' || depth > 32) return s;
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(s.$ref);
  if (!match) return undefined;
  return resolve((root[match[1]!] as Json | undefined)?.[decodeURIComponent(match[2]!)], root, depth + 1);
}

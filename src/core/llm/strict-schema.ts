/**
 * OpenAI's strict structured output accepts a subset of JSON Schema: every object closed and fully required, no
 * oneOf/allOf/not/if, few formats. This rewrites a schema into that subset (optional -> required but nullable), or
 * says it cannot. Dropped constraints are safe to drop: the caller validates the answer against the original schema.
 */
import { nestedTooDeep } from '../validation.js';

type Json = Record<string, unknown>;

const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const KEPT = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'additionalProperties',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'format',
]);
const UNSUPPORTED = [
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'unevaluatedProperties',
  'prefixItems',
  'propertyNames',
];

class NotStrict extends Error {}

/** The strict-mode version of `schema`, or undefined when it has no faithful strict form. */
export function toStrictSchema(schema: Json): Json | undefined {
  try {
    return convert(schema, true) as Json;
  } catch (err) {
    if (err instanceof NotStrict) return undefined;
    throw err;
  }
}

function convert(node: unknown, isRoot = false): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const src = node as Json;
  for (const key of UNSUPPORTED) if (key in src) throw new NotStrict(key);
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (!KEPT.has(key) && key !== 'oneOf') continue;
    if (key === 'format' && !STRICT_FORMATS.has(String(value))) continue;
    out[key] = value;
  }
  if ('oneOf' in src) {
    // Exclusive choice becomes a plain choice; validation afterwards still enforces exclusivity.
    out.anyOf = src.oneOf;
    delete out.oneOf;
  }
  if (Array.isArray(out.anyOf)) out.anyOf = out.anyOf.map((branch) => convert(branch));
  for (const defsKey of ['$defs', 'definitions']) {
    const defs = out[defsKey];
    if (defs && typeof defs === 'object') out[defsKey] = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v)]));
  }
  if (out.items !== undefined) {
    if (Array.isArray(out.items) || typeof out.items !== 'object') throw new NotStrict('items');
    out.items = convert(out.items);
  }
  const types = Array.isArray(out.type) ? out.type : out.type === undefined ? [] : [out.type];
  if (types.includes('object') || out.properties) {
    if (src.additionalProperties !== undefined && src.additionalProperties !== false) throw new NotStrict('additionalProperties');
    const properties = (src.properties ?? {}) as Json;
    if (Object.keys(properties).length === 0 && !isRoot) throw new NotStrict('open object');
    const required = new Set(Array.isArray(src.required) ? (src.required as string[]) : []);
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, prop]) => [name, required.has(name) ? convert(prop) : allowNull(convert(prop))]),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  if (isRoot && !(types.includes('object') || out.properties)) throw new NotStrict('root');
  return out;
}

/** The schema that also accepts null: an extra "null" type, or an anyOf branch. */
function allowNull(node: unknown): unknown {
  if (typeof node !== 'object' || node === null) return node;
  const schema = node as Json;
  if (typeof schema.type === 'string' && !schema.$ref && !schema.anyOf && !schema.enum && !schema.const) {
    return schema.type === 'null' ? schema : { ...schema, type: [schema.type, 'null'] };
  }
  if (Array.isArray(schema.type) && !schema.enum)
    return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  if (Array.isArray(schema.anyOf) && !schema.type && !schema.$ref) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * Undoes the rewrite on an answer: a null for a property that was optional and does not accept null in `original`
 * means "absent", so it is removed.
 */
export function dropAddedNulls(value: unknown, original: Json): unknown {
  // Too deep to walk safely; the caller's validation refuses such an answer anyway.
  if (nestedTooDeep(value)) return value;
  return walk(value, original, original);
}

function walk(value: unknown, schema: unknown, root: Json): unknown {
  const node = resolveRef(schema, root);
  if (!node || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return node.items && typeof node.items === 'object' ? value.map((item) => walk(item, node.items, root)) : value;
  const properties = node.properties as Json | undefined;
  if (!properties) {
    // Without properties here, try the one anyOf/oneOf branch that describes an object.
    const branches = ((node.anyOf ?? node.oneOf) as unknown[] | undefined)?.map((b) => resolveRef(b, root)).filter((b) => b?.properties);
    return branches?.length === 1 ? walk(value, branches[0], root) : value;
  }
  const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null && !required.has(key) && key in properties && !acceptsNull(properties[key], root)) continue;
    out[key] = key in properties ? walk(v, properties[key], root) : v;
  }
  return out;
}

function acceptsNull(schema: unknown, root: Json): boolean {
  const node = resolveRef(schema, root);
  if (!node) return true;
  if (node.type === 'null' || (Array.isArray(node.type) && node.type.includes('null')) || node.nullable === true) return true;
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true;
  if (node.const === null) return true;
  const branches = (node.anyOf ?? node.oneOf) as unknown[] | undefined;
  if (branches) return branches.some((b) => acceptsNull(b, root));
  return node.type === undefined && node.enum === undefined && node.const === undefined && !node.properties && !node.items;
}

function resolveRef(schema: unknown, root: Json, depth = 0): Json | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const node = schema as Json;
  if (typeof node.$ref !== 'string' || depth > 20) return node;
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(node.$ref);
  const defs = match ? (root[match[1]!] as Json | undefined) : undefined;
  return resolveRef(defs?.[decodeURIComponent(match![2]!)], root, depth + 1);
}

import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * What the OpenAPI document says of a schema where the wire differs from the validator: a query
 * boolean is validated as the strings `true`/`false`/`1`/`0` but is a boolean to clients, and zod
 * leaves out the `default` of a parameter whose validator transforms it. With a `type`, the
 * type-shaping keywords zod emitted are replaced; descriptions and other metadata stay.
 */
const wireSchemas = z.registry<{ wire: JsonSchema }>();

/** Declare what `schema` looks like on the wire (returns it, for chaining in a route's query). */
export function onTheWire<T extends z.ZodType>(schema: T, wire: JsonSchema): T {
  wireSchemas.add(schema, { wire });
  return schema;
}

const TYPE_KEYWORDS = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'items', 'format', 'pattern', 'minLength', 'maxLength'];

/** The `override` hook for `z.toJSONSchema`: applies `wireSchemas`. */
export function applyWireSchema(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const entry = wireSchemas.get(ctx.zodSchema as z.ZodType);
  if (!entry) return;
  if ('type' in entry.wire) for (const key of TYPE_KEYWORDS) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, entry.wire);
}

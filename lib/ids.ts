const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids in URLs and tokens are untrusted: one that is not a UUID names nothing (404, not a database error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

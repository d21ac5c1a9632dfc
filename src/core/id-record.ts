// Tool-call ids are data from the model: any string, "__proto__", "constructor" and
// "toString" included. Records keyed by them stay plain JSON objects (they live in persisted
// snapshots), so they are built with own data properties and read through own properties only:
// `record[id] = value` with id "__proto__" would set the prototype instead, and `record[id]`
// or `id in record` would find Object.prototype's members.

/** A record keyed by tool-call ids, built from entries as own properties, whatever the ids. */
export const recordById = <T>(entries: Iterable<readonly [string, T]>): Record<string, T> =>
  Object.fromEntries(entries) as Record<string, T>;

/** The entry for `id`, if `record` has one of its own. */
export const entryById = <T>(record: Readonly<Record<string, T>>, id: string): T | undefined =>
  Object.hasOwn(record, id) ? record[id] : undefined;

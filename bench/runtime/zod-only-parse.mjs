// Stands in for dist/store/fast-parse.js in bench/fast-parse.mjs's "zod" side: every parse is
// zod's own (`safeParse`, `parse`), as if the fast path were deleted.

/** As in fast-parse.ts: the value must be left to the zod parse. */
export const UNSURE = Symbol("unsure");

/** Never sure: every value goes to zod. */
export const fastParser = () => () => UNSURE;

/** `schema.safeParse`. */
export const fastSafeParser = (schema) => (value) => schema.safeParse(value);

/** `schema.parse`. */
export const fastThrowingParser = (schema) => (value) => schema.parse(value);

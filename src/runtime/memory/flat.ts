/** Written by `flat`, so that its read is a side effect no compiler drops. */
let lastRead = 0;

/**
 * `text`, flat. V8 builds a long string (a `JSON.stringify` result, a concatenation) as a rope:
 * a cons string per part, about 190 B more than the flat string for a 600-character record
 * document. Reading a character of a rope flattens it in place, and the next scavenge drops its
 * parts: for the strings this backend keeps as long as their run (documents, messages,
 * summaries, checkpoints).
 */
export function flat(text: string): string {
  lastRead = text.charCodeAt(0) | lastRead;
  return text;
}

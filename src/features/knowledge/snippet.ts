const BEFORE = 60;
const AFTER = 160;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A short excerpt of `text` around the first occurrence of any of `terms` (case-insensitive,
 * at the start of a word), cut at spaces and marked with "…" where text was left out. Without
 * an occurrence, the start of the text.
 */
export function makeSnippet(text: string, terms: readonly string[]): string {
  const words = terms.filter((term) => term !== "").map(escapeRegExp);
  const match =
    words.length === 0
      ? null
      : new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.join("|")})`, "iu").exec(text);
  const at = match?.index ?? 0;
  let start = Math.max(0, at - BEFORE);
  let end = Math.min(text.length, at + AFTER);
  if (start > 0) {
    const space = text.indexOf(" ", start);
    if (space !== -1 && space < at) start = space + 1;
  }
  if (end < text.length) {
    const space = text.lastIndexOf(" ", end);
    if (space > at) end = space;
  }
  const excerpt = text.slice(start, end).replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${excerpt}${end < text.length ? "…" : ""}`;
}

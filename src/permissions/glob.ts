/** A whole-name matcher for `*` (any run of characters) and `?` (one character). */
export function globToRegExp(glob: string): RegExp {
  const source = glob
    .split("")
    .map((char) => {
      if (char === "*") return ".*";
      if (char === "?") return ".";
      return char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${source}$`);
}

/** Collects a stream's bytes up to a limit; what comes after is counted and dropped. */
export class CappedOutput {
  readonly #limit: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.#limit - this.#kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  /** The text kept; when bytes were dropped, cut at a character boundary and marked. */
  text(): string {
    const bytes = Buffer.concat(this.#chunks);
    if (this.#total <= this.#limit) return bytes.toString("utf8");
    return `${wholeCharacters(bytes).toString("utf8")}\n[output truncated at ${this.#limit} bytes]`;
  }
}

/** Drops a UTF-8 character the cut split in two, so the text does not end in U+FFFD. */
function wholeCharacters(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

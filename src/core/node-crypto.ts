import type * as Crypto from "node:crypto";

// node:crypto loads on first use, not at `import "harnessx"`: loading it was about a third of
// what the import still cost over its floor (SPEC §15). Import these from here, not from
// "node:crypto".
let loaded: typeof Crypto | undefined;
const crypto = (): typeof Crypto => {
  loaded ??= process.getBuiltinModule("node:crypto");
  return loaded;
};

export const randomUUID = (): string => crypto().randomUUID();
export const randomBytes = (size: number): Buffer => crypto().randomBytes(size);
export const createHash = (algorithm: string): Crypto.Hash => crypto().createHash(algorithm);
export const createHmac = (algorithm: string, key: Crypto.BinaryLike): Crypto.Hmac =>
  crypto().createHmac(algorithm, key);
export const timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView): boolean =>
  crypto().timingSafeEqual(a, b);

import type { NextFunction, Request, Response } from "express";

/**
 * The host name of a `Host` header, lower-cased, without its port (IPv6 keeps its brackets),
 * or undefined when there is none.
 */
export function hostNameOf(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  const host = header.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end === -1 ? undefined : host.slice(0, end + 1);
  }
  const colon = host.indexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

/** The address a request came in on, as a `Host` header would name it. */
function localHostName(request: Request): string | undefined {
  const address = request.socket.localAddress;
  if (address === undefined) return undefined;
  // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d.
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
  return plain.includes(":") ? `[${plain.toLowerCase()}]` : plain;
}

/**
 * Refuses (421) a request whose `Host` is not the address it came in on, `localhost`, or one of
 * `allowedHosts` (a name, or a name with its port): a page on another site whose name was made
 * to resolve to this address (DNS rebinding) cannot read runs, with `readOpen` or not.
 */
export function requireKnownHost(allowedHosts: readonly string[]) {
  const allowed = new Set(allowedHosts.map((host) => host.toLowerCase()));
  return (request: Request, response: Response, next: NextFunction): void => {
    const header = request.get("host")?.trim().toLowerCase();
    const name = hostNameOf(header);
    if (
      name !== undefined &&
      header !== undefined &&
      (name === "localhost" ||
        name === localHostName(request) ||
        allowed.has(name) ||
        allowed.has(header))
    ) {
      next();
      return;
    }
    response.status(421).json({
      error: {
        code: "host_not_allowed",
        message:
          "This dashboard does not answer for that host name: add it to the dashboard's allowedHosts.",
      },
    });
  };
}

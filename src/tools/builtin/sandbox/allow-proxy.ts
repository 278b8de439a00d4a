/**
 * The allow-list proxy a sandbox reaches instead of the network (through its bridge, see bridge.ts):
 * an HTTP proxy on a unix socket in the bridge's folder. CONNECT (HTTPS) and plain HTTP requests go
 * out only to the hosts of the policy (exact names, or `*.example.com` for its subdomains; `any`
 * for every host), and only to public addresses unless the operator allows private ones: every
 * address a name resolves to is checked, then the connection goes to exactly that address.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { isAddressAllowed, type ResolvedAddress, systemLookup } from "../network-guard.js";

export interface ProxyPolicy {
  /** Hosts that may be reached, or "any" (every public host). */
  hosts: readonly string[] | "any";
  /** Private, loopback and link-local addresses too (the operator's `tools.fetch.allowPrivateNetwork`). */
  allowPrivate: boolean;
  /** Resolver (tests); default the system's. */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
}

/** Whether `host` is named by the policy's hosts. */
export function hostAllowed(host: string, hosts: readonly string[] | "any"): boolean {
  if (hosts === "any") return true;
  const name = host.toLowerCase().replace(/\.$/, "");
  return hosts.some((pattern) => {
    const p = pattern.toLowerCase().replace(/\.$/, "");
    if (p.startsWith("*.")) return name.endsWith(p.slice(1)) && name.length > p.length - 1;
    return name === p;
  });
}

/** The address to connect to, or why not. */
async function resolveTarget(
  host: string,
  policy: ProxyPolicy,
): Promise<{ address: string } | { refused: string }> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (!hostAllowed(bare, policy.hosts)) {
    return {
      refused: `the sandbox's network policy does not allow ${bare} (the agent can ask for it with request_network)`,
    };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses =
      isIP(bare) !== 0
        ? [{ address: bare, family: isIP(bare) === 6 ? 6 : 4 }]
        : await (policy.lookup ?? systemLookup)(bare);
  } catch {
    return { refused: `${bare} could not be resolved` };
  }
  if (addresses.length === 0) return { refused: `${bare} could not be resolved` };
  if (!policy.allowPrivate) {
    const blocked = addresses.find((a) => !isAddressAllowed(a.address).allowed);
    if (blocked) {
      return {
        refused: `${bare} resolves to ${blocked.address} (${isAddressAllowed(blocked.address).range}), a private address the operator has not allowed`,
      };
    }
  }
  return { address: (addresses[0] as ResolvedAddress).address };
}

function refuse(socket: Duplex, status: string, why: string): void {
  const body = `Dimsum refused this connection: ${why}.\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!match) return undefined;
  const port = match[2] ? Number(match[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: match[1] as string, port };
}

async function onConnect(req: IncomingMessage, client: Duplex, head: Buffer, policy: ProxyPolicy) {
  client.on("error", () => client.destroy());
  const target = splitHostPort(req.url ?? "", 443);
  if (!target) return refuse(client, "400 Bad Request", "the CONNECT target is not host:port");
  const resolved = await resolveTarget(target.host, policy);
  if ("refused" in resolved) return refuse(client, "403 Forbidden", resolved.refused);
  const upstream: Socket = connect(target.port, resolved.address);
  upstream.once("connect", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on("error", () => {
    if (upstream.connecting) refuse(client, "502 Bad Gateway", `${target.host} did not answer`);
    else client.destroy();
  });
  client.on("close", () => upstream.destroy());
}

async function onRequest(req: IncomingMessage, res: ServerResponse, policy: ProxyPolicy) {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    res.writeHead(400, { "content-type": "text/plain" }).end("Dimsum's proxy needs an absolute URL.\n");
    return;
  }
  if (url.protocol !== "http:") {
    res.writeHead(400, { "content-type": "text/plain" }).end("Use CONNECT for HTTPS.\n");
    return;
  }
  const resolved = await resolveTarget(url.hostname, policy);
  if ("refused" in resolved) {
    res
      .writeHead(403, { "content-type": "text/plain" })
      .end(`Dimsum refused this request: ${resolved.refused}.\n`);
    return;
  }
  const headers = { ...req.headers };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  const upstream = httpRequest(
    {
      host: resolved.address,
      port: url.port === "" ? 80 : Number(url.port),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end();
  });
  req.pipe(upstream);
}

/** A running proxy; `close` stops it and its tunnels. */
export interface AllowProxy {
  close(): Promise<void>;
}

/** Starts the proxy listening on the unix socket `path`. */
export function startAllowProxy(path: string, policy: ProxyPolicy): Promise<AllowProxy> {
  const sockets = new Set<Duplex>();
  const server = createServer((req, res) => void onRequest(req, res, policy));
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    void onConnect(req, client, head, policy);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve({
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

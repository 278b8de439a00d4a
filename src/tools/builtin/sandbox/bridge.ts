/**
 * The bridge between a sandbox's private network and Dimsum. A sandboxed command keeps
 * `--unshare-net` (only its own loopback); a small Node program started inside next to it
 * - accepts connections on `in.sock` in a folder Dimsum shares with the sandbox, reads one line
 *   naming a port, and connects it to that port on the sandbox's loopback (how Dimsum reaches a
 *   session's dev server: previews, the browser, waiting for a port);
 * - when a network policy is set, listens on 127.0.0.1:PROXY_PORT inside and forwards each
 *   connection to `proxy.sock`, Dimsum's allow-list proxy (see allow-proxy.ts), which is then the
 *   only way out: HTTP_PROXY/HTTPS_PROXY point at it.
 * Dimsum opens `in.sock` without following links (O_PATH|O_NOFOLLOW, then checks it is a socket),
 * so a command that replaces it with a link to another socket on the machine reaches nothing.
 */
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where the shared folder appears inside the sandbox. */
export const BRIDGE_MOUNT = "/run/dimsum";
/** Where Node appears inside the sandbox when it is not under a system folder already. */
export const BRIDGE_NODE = "/run/dimsum-node";
/** The proxy's port on the sandbox's own loopback. */
export const PROXY_PORT = 3128;
/** Written inside the sandbox's private /tmp once the bridge listens. */
const READY_FILE = "/tmp/.dimsum-bridge";

// O_PATH and O_NOFOLLOW (Linux): open the path itself, never what a link points to.
const O_PATH = 0o10000000;
const O_NOFOLLOW = 0o400000;

/** The bridge program (CommonJS, for `node -e`); argv: folder, proxy port or "". */
export const BRIDGE_SCRIPT = `
const net = require("net"), fs = require("fs");
const [dir, proxyPort] = process.argv.slice(1);
const pipeBoth = (a, b) => { a.on("error", () => b.destroy()); b.on("error", () => a.destroy());
  a.on("close", () => b.destroy()); b.on("close", () => a.destroy()); a.pipe(b); b.pipe(a); };
const connectLocal = (port, done) => {
  const t = net.connect(port, "127.0.0.1");
  t.once("connect", () => done(t));
  t.once("error", () => { const u = net.connect(port, "::1"); u.once("connect", () => done(u)); u.once("error", () => done()); });
};
const inbound = net.createServer((s) => {
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const nl = head.indexOf(10);
    if (nl < 0) { if (head.length > 16) s.destroy(); return; }
    s.off("data", onData); s.pause();
    const port = Number(head.subarray(0, nl).toString());
    const rest = head.subarray(nl + 1);
    if (!Number.isInteger(port) || port < 1 || port > 65535) return s.destroy();
    connectLocal(port, (t) => {
      if (!t) return s.end("NO\\n");
      s.write("OK\\n"); if (rest.length) t.write(rest); pipeBoth(s, t); s.resume();
    });
  };
  s.on("data", onData); s.on("error", () => {});
});
let waiting = 1 + (proxyPort ? 1 : 0);
const ready = () => { if (--waiting === 0) fs.writeFileSync(${JSON.stringify(READY_FILE)}, ""); };
try { fs.unlinkSync(dir + "/in.sock"); } catch {}
inbound.listen(dir + "/in.sock", ready);
if (proxyPort) net.createServer((s) => pipeBoth(s, net.connect(dir + "/proxy.sock"))).listen(Number(proxyPort), "127.0.0.1", ready);
`;

/** Shell lines starting the bridge in the background and waiting (up to 10 s) until it listens. */
export function bridgePrologue(): string[] {
  return [
    `"$3" -e "$2" ${BRIDGE_MOUNT} "$4" </dev/null >/dev/null 2>&1 &`,
    `n=0; while [ ! -e ${READY_FILE} ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done`,
  ];
}

/** A folder shared with one sandbox (its sockets live there); removed with `dispose`. */
export interface BridgeFolder {
  /** The host path (short, under the system's temporary folder: socket paths are limited). */
  dir: string;
  dispose(): void;
}

/** Creates the shared folder of one sandboxed command or process. */
export function createBridgeFolder(): BridgeFolder {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-br-"));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Connects to `port` on the sandbox's loopback through its bridge. Resolves with the connected
 * socket, paused (the bridge's reply consumed; pipe or resume it), or undefined when nothing listens there (or no bridge runs).
 */
export function connectThroughBridge(dir: string, port: number): Promise<Socket | undefined> {
  let fd: number;
  try {
    fd = openSync(join(dir, "in.sock"), O_PATH | O_NOFOLLOW);
  } catch {
    return Promise.resolve(undefined);
  }
  let isSocket = false;
  try {
    isSocket = fstatSync(fd).isSocket();
  } catch {
    isSocket = false;
  }
  if (!isSocket) {
    closeSync(fd);
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const socket = connect(`/proc/self/fd/${fd}`);
    let reply = Buffer.alloc(0);
    let settled = false;
    const settle = (value: Socket | undefined) => {
      if (settled) return;
      settled = true;
      socket.off("data", onData);
      if (!value) socket.destroy();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      const nl = reply.indexOf(10);
      if (nl < 0) {
        if (reply.length > 8) settle(undefined);
        return;
      }
      const ok = reply.subarray(0, nl).toString() === "OK";
      const rest = reply.subarray(nl + 1);
      if (ok) {
        socket.pause();
        if (rest.length > 0) socket.unshift(rest);
      }
      settle(ok ? socket : undefined);
    };
    let fdOpen = true;
    const closeFd = () => {
      if (!fdOpen) return;
      fdOpen = false;
      closeSync(fd);
    };
    socket.once("connect", () => {
      closeFd();
      socket.write(`${port}\n`);
    });
    socket.on("data", onData);
    socket.once("error", () => {
      closeFd();
      settle(undefined);
    });
    socket.once("close", () => settle(undefined));
  });
}

/** Whether something listens on `port` inside the sandbox. */
export async function portListening(dir: string, port: number): Promise<boolean> {
  const socket = await connectThroughBridge(dir, port);
  socket?.destroy();
  return socket !== undefined;
}

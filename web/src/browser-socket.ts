/** The browser's WebSocket behind the small SocketLike interface the WsClient is written against. */
import type { SocketHandlers, SocketLike } from "./ws.js";

/** `ws(s)://<this host>/ws`, matching the page's scheme so TLS pages use wss. */
export function liveUrl(location: Pick<Location, "protocol" | "host">): string {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

/** Opens a WebSocket (the session cookie authenticates it) and forwards its events. */
export function createBrowserSocket(url: string, handlers: SocketHandlers): SocketLike {
  const ws = new WebSocket(url);
  ws.onopen = () => handlers.onOpen();
  ws.onmessage = (event: MessageEvent) => {
    if (typeof event.data === "string") handlers.onMessage(event.data);
  };
  ws.onclose = (event: CloseEvent) => handlers.onClose(event.code, event.reason);
  return {
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
  };
}

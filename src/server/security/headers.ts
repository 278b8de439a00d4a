/** Security headers on every response, with the CSP the web UI is built to pass. */
import { secureHeaders } from "hono/secure-headers";

/** The contract's Content-Security-Policy: no inline scripts, no third-party origins. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'";

/** Hono's secure-headers middleware configured for Dimsum (browsers ignore HSTS on plain HTTP). */
export function securityHeaders() {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      connectSrc: ["'self'", "ws:", "wss:"],
      imgSrc: ["'self'", "data:"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      scriptSrc: ["'self'"],
    },
    xFrameOptions: "DENY",
    // Without includeSubDomains: Dimsum must not pin HTTPS onto sibling hosts of whoever runs it.
    strictTransportSecurity: "max-age=15552000",
    referrerPolicy: "no-referrer",
    xContentTypeOptions: true,
    // A route that sets its own policy keeps it: an MCP App's sandboxed document, a file's download.
    overwrite: false,
    permissionsPolicy: {
      camera: [],
      microphone: [],
      geolocation: [],
      payment: [],
      usb: [],
    },
  });
}

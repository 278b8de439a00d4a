import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_CONFIG, EXIT_OK } from "../../src/cli/exit-codes.js";
import { call, login, sink, tempDir, waitFor } from "./helpers.js";

describe("dimsum serve", () => {
  it("starts, prints its URL and the one-time owner password, serves, and stops cleanly", async () => {
    const home = tempDir();
    const stdout = sink();
    const stderr = sink();
    const stop = new AbortController();
    const running = serveCommand(
      { port: 0 },
      { stdout, stderr, env: { DIMSUM_HOME: home }, cwd: home, signal: stop.signal },
    );
    const url = await waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout.text)?.[1]);
    const password = /one-time password: (\S+)/.exec(stdout.text)?.[1];
    expect(password).toBeDefined();
    const session = await login(url, "owner", password!);
    expect((await call(url, "/api/auth/me", { session })).status).toBe(200);
    expect((await fetch(`${url}/`)).headers.get("content-security-policy")).toContain("default-src 'self'");

    stop.abort();
    expect(await running).toBe(EXIT_OK);
    expect(stderr.text).toBe("");
    await expect(fetch(`${url}/api/auth/status`)).rejects.toThrow();

    // A restart finds the owner and prints no new password.
    const again = sink();
    const stop2 = new AbortController();
    const second = serveCommand(
      { port: 0 },
      { stdout: again, stderr, env: { DIMSUM_HOME: home }, cwd: home, signal: stop2.signal },
    );
    await waitFor(() => (/serving on/.test(again.text) ? true : undefined));
    expect(again.text).not.toContain("one-time password");
    stop2.abort();
    expect(await second).toBe(EXIT_OK);
  });

  it("says clearly when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const home = tempDir();
      const stderr = sink();
      const code = await serveCommand(
        { port },
        { stdout: sink(), stderr, env: { DIMSUM_HOME: home }, cwd: home },
      );
      expect(code).toBe(EXIT_CONFIG);
      expect(stderr.text).toContain(`127.0.0.1:${port} is already in use`);
      expect(stderr.text).toContain("--port");
    } finally {
      blocker.close();
    }
  });
});

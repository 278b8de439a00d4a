import { describe, expect, it } from "vitest";
import {
  DEFAULT_SHELL_CONFIRM,
  DEFAULT_SHELL_DENY,
  defaultToolsConfig,
} from "../../../src/tools/builtin/defaults.js";

describe("defaultToolsConfig", () => {
  it("has the documented limits", () => {
    const config = defaultToolsConfig();
    expect(config.shell).toMatchObject({ allow: [], timeoutMs: 120_000, maxOutputBytes: 65_536 });
    expect(config.fetch).toEqual({ allowPrivateNetwork: false, timeoutMs: 20_000, maxBytes: 2_097_152 });
    expect(config.shell.deny).toEqual(DEFAULT_SHELL_DENY);
    expect(config.shell.confirm).toEqual(DEFAULT_SHELL_CONFIRM);
  });

  it("returns a fresh copy each time", () => {
    const a = defaultToolsConfig();
    a.shell.deny.push("x");
    a.fetch.allowPrivateNetwork = true;
    const b = defaultToolsConfig();
    expect(b.shell.deny).toEqual(DEFAULT_SHELL_DENY);
    expect(b.fetch.allowPrivateNetwork).toBe(false);
  });

  it("has only valid regular expressions", () => {
    for (const source of [...DEFAULT_SHELL_DENY, ...DEFAULT_SHELL_CONFIRM])
      expect(() => new RegExp(source)).not.toThrow();
  });
});

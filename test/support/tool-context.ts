/** A tool context for unit tests: an open signal, /tmp as the workspace, small shell and fetch limits. */
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import type { ToolContext } from "../../src/tools/types.js";

export function testToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    workspace: "/tmp",
    runId: "run-1",
    todos: { list: () => [], save: () => {} },
    config: {
      shell: {
        ...defaultToolsConfig().shell,
        allow: [],
        deny: [],
        confirm: [],
        timeoutMs: 1000,
        maxOutputBytes: 1000,
      },
      fetch: { allowPrivateNetwork: false, timeoutMs: 1000, maxBytes: 1000 },
    },
    ...overrides,
  };
}

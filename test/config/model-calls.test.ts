/** `modelCalls` in the config file: read once at the edge, carried into every resolved ModelSpec. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { resolveModel } from "../../src/config/resolve-model.js";
import { DEFAULT_MODEL_CALL_LIMITS } from "../../src/llm/call-limits.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function configIn(file: unknown) {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-model-calls-"));
  dirs.push(dir);
  if (file !== undefined) writeFileSync(join(dir, "dimsum.config.json"), JSON.stringify(file));
  return () => loadConfig({ cwd: dir, env: { DIMSUM_HOME: join(dir, "home"), OLLAMA_BASE_URL: "" } });
}

describe("modelCalls configuration", () => {
  it("defaults to 30 s first byte, 60 s idle, 10 min per call and a 150 s retry budget", () => {
    const config = configIn(undefined)();
    expect(config.modelCalls).toEqual(DEFAULT_MODEL_CALL_LIMITS);
    expect(DEFAULT_MODEL_CALL_LIMITS).toEqual({
      firstByteMs: 30_000,
      idleMs: 60_000,
      callMs: 600_000,
      retryBudgetMs: 150_000,
    });
  });

  it("takes the file's values over the defaults and passes them down in the ModelSpec", () => {
    const config = configIn({ modelCalls: { idleMs: 120_000, callMs: 1_200_000 } })();
    expect(config.modelCalls).toEqual({ ...DEFAULT_MODEL_CALL_LIMITS, idleMs: 120_000, callMs: 1_200_000 });
    expect(resolveModel(config, "ollama:qwen2.5:7b").limits).toEqual(config.modelCalls);
  });

  it("rejects an unknown key or a non-positive value, naming the field", () => {
    expect(configIn({ modelCalls: { idleSeconds: 5 } })).toThrow(/modelCalls/);
    expect(configIn({ modelCalls: { firstByteMs: 0 } })).toThrow(/modelCalls\.firstByteMs/);
  });
});

/** The speech-to-text endpoint from the DIMSUM_STT_* variables over the config file's `speechToText`. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function load(env: Record<string, string>, file?: Record<string, unknown>) {
  const home = mkdtempSync(join(tmpdir(), "dimsum-stt-config-"));
  homes.push(home);
  if (file) writeFileSync(join(home, "config.json"), JSON.stringify(file));
  return loadConfig({ cwd: home, env: { DIMSUM_HOME: home, ...env } });
}

describe("speech-to-text configuration", () => {
  it("is off without a base URL", () => {
    expect(load({ DIMSUM_STT_API_KEY: "sk-x" }).speechToText).toBeUndefined();
  });

  it("takes the variables, with whisper-1 as the default model", () => {
    expect(
      load({ DIMSUM_STT_BASE_URL: "https://api.openai.com/v1/", DIMSUM_STT_API_KEY: "sk-x" }).speechToText,
    ).toEqual({
      baseUrl: "https://api.openai.com/v1",
      model: "whisper-1",
      apiKey: "sk-x",
      language: undefined,
    });
  });

  it("reads the config file, its key from the variable apiKeyEnv names; the variables win", () => {
    const file = {
      speechToText: {
        baseUrl: "https://api.groq.com/openai/v1",
        model: "whisper-large-v3",
        apiKeyEnv: "GROQ_API_KEY",
        language: "zh",
      },
    };
    expect(load({ GROQ_API_KEY: "gsk-1" }, file).speechToText).toEqual({
      baseUrl: "https://api.groq.com/openai/v1",
      model: "whisper-large-v3",
      apiKey: "gsk-1",
      language: "zh",
    });
    expect(
      load({ GROQ_API_KEY: "gsk-1", DIMSUM_STT_MODEL: "distil-whisper", DIMSUM_STT_API_KEY: "k2" }, file)
        .speechToText,
    ).toMatchObject({
      model: "distil-whisper",
      apiKey: "k2",
    });
  });

  it("refuses a base URL that is not http(s), saying which setting to fix", () => {
    expect(() => load({ DIMSUM_STT_BASE_URL: "ftp://example.com" })).toThrow(/DIMSUM_STT_BASE_URL/);
  });
});

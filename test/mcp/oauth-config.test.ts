// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in config text is the syntax under test
/** The `oauth` entries of mcp.json, the elicitation form helpers and the sealed credential store. */
import { describe, expect, it } from "vitest";
import { parseMcpConfig } from "../../src/mcp/config.js";
import { formDefaults, formFields, parseFieldInput, validateForm } from "../../src/mcp/elicitation-form.js";
import { sealedCredentialStore } from "../../src/mcp/oauth/credential-store.js";

const FILE = "/tmp/mcp.json";
const parse = (oauth: unknown, env: Record<string, string> = {}) =>
  parseMcpConfig(
    JSON.stringify({ mcpServers: { s: { url: "http://127.0.0.1:1/mcp", oauth } } }),
    FILE,
    env,
  )[0];

describe("mcp.json oauth", () => {
  it("keeps a secret without a grant as client credentials, and expands variables", () => {
    const server = parse({ clientId: "id", clientSecret: "${SECRET}" }, { SECRET: "s3" });
    expect(server).toMatchObject({
      oauth: { grant: "client_credentials", clientId: "id", clientSecret: "s3" },
    });
  });

  it("reads the authorization-code grant with a metadata document URL and a fixed port", () => {
    const server = parse({ clientMetadataUrl: "https://dimsum.example/client.json", redirectPort: 8765 });
    expect(server).toMatchObject({
      oauth: {
        grant: "authorization_code",
        clientMetadataUrl: "https://dimsum.example/client.json",
        redirectPort: 8765,
      },
    });
  });

  it("reads pre-registered authorization-code credentials and enterprise settings", () => {
    expect(parse({ grant: "authorization_code", clientId: "pre", clientSecret: "x" })).toMatchObject({
      oauth: { grant: "authorization_code", clientId: "pre", clientSecret: "x" },
    });
    expect(
      parse({
        clientId: "c",
        clientSecret: "s",
        idp: { tokenEndpoint: "https://idp.example/token", clientId: "i", idToken: "t" },
      }),
    ).toMatchObject({ oauth: { grant: "enterprise", idp: { clientId: "i", idToken: "t" } } });
  });

  it("rejects a client-credentials grant without a secret or key, saying what to add", () => {
    expect(() => parse({ grant: "client_credentials", clientId: "id" })).toThrow(/clientSecret.*privateKey/);
  });
});

describe("elicitation forms", () => {
  const schema = {
    type: "object" as const,
    properties: {
      name: { type: "string" as const, title: "Name", minLength: 2 },
      age: { type: "integer" as const, minimum: 0, default: 30 },
      color: { type: "string" as const, enum: ["red", "green"] },
      ok: { type: "boolean" as const, default: true },
    },
    required: ["name"],
  };

  it("applies defaults and validates each field", () => {
    expect(formDefaults(schema)).toEqual({ age: 30, ok: true });
    const [name, age, color, ok] = formFields(schema);
    expect(name && parseFieldInput(name, "x")).toEqual({ ok: false, error: "at least 2 characters" });
    expect(name && parseFieldInput(name, "")).toEqual({ ok: false, error: "Name is required" });
    expect(age && parseFieldInput(age, "1.5")).toEqual({ ok: false, error: "enter a whole number" });
    expect(age && parseFieldInput(age, "")).toEqual({ ok: true, value: 30 });
    expect(color && parseFieldInput(color, "2")).toEqual({ ok: true, value: "green" });
    expect(color && parseFieldInput(color, "blue").ok).toBe(false);
    expect(ok && parseFieldInput(ok, "no")).toEqual({ ok: true, value: false });
    expect(validateForm(schema, { name: "Ada", age: -1 })).toEqual({ age: "at least 0" });
  });
});

describe("sealed credential store", () => {
  it("stores only sealed text and reads back what it sealed", async () => {
    const files = new Map<string, string>();
    const box = {
      seal: (plain: string) => `sealed:${Buffer.from(plain).toString("base64")}`,
      open: (sealed: string) =>
        sealed.startsWith("sealed:") ? Buffer.from(sealed.slice(7), "base64").toString() : undefined,
    };
    const store = sealedCredentialStore(
      {
        read: async (k) => files.get(k),
        write: async (k, v) => {
          files.set(k, v);
        },
        remove: async (k) => {
          files.delete(k);
        },
      },
      box,
    );
    await store.save("s", { url: "u", tokens: { access_token: "secret-token", token_type: "Bearer" } });
    expect([...files.values()][0]).not.toContain("secret-token");
    expect((await store.load("s"))?.tokens?.access_token).toBe("secret-token");
    files.set("s", "garbage");
    expect(await store.load("s")).toBeUndefined();
    await store.delete("s");
    expect(files.size).toBe(0);
  });
});

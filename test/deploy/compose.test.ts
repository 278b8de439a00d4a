/**
 * compose.yaml, deploy/Caddyfile and the Dockerfile (issue 42), read as data: the default service is
 * one instance on one volume; the `team` profile is PostgreSQL, Redis and two instances sharing one
 * database, one Redis and one DIMSUM_SECRET_KEY behind Caddy, the second started after the first is
 * healthy (the first applies the migrations), with a volume for every piece of state; the image runs
 * as a non-root user with no secret in it. (`docker compose config` is not installed here.)
 *
 * Then the team profile's instances as processes: two `dimsum serve` with the environment compose.yaml
 * gives them (its host names pointed at this machine's PostgreSQL and Redis), started in the order
 * compose starts them, answer a chat on one and show it, with the same sign-in, on the other.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ChannelMessage } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, tempDir } from "../server/helpers.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

interface Service {
  image?: string;
  build?: unknown;
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  command?: string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

const compose = parse(readFileSync(join(projectRoot, "compose.yaml"), "utf8"), {
  merge: true,
}) as ComposeFile;
const caddyfile = readFileSync(join(projectRoot, "deploy/Caddyfile"), "utf8");
const dockerfile = readFileSync(join(projectRoot, "Dockerfile"), "utf8");
const TEAM = ["postgres", "redis", "dimsum-a", "dimsum-b", "proxy"];

/** The named volume mounted at `path` in a service, if any. */
function volumeAt(service: Service | undefined, path: string): string | undefined {
  const mount = service?.volumes?.find((v) => v.split(":")[1] === path);
  return mount?.split(":")[0];
}

/** Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?error}` with the given values. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?::?([-?])([^}]*))?\}/g,
    (_, name: string, kind?: string, rest?: string) => {
      const given = vars[name];
      if (given !== undefined && given !== "") return given;
      if (kind === "-") return rest ?? "";
      throw new Error(`compose.yaml needs ${name}: ${rest ?? ""}`);
    },
  );
}

describe("compose.yaml", () => {
  it("runs one instance by default: the image, its port, the SQLite state on one volume", () => {
    const dimsum = compose.services.dimsum;
    expect(dimsum?.profiles).toBeUndefined();
    expect(dimsum?.image).toBe("dimsum:latest");
    expect(dimsum?.build).toEqual({ context: "." });
    expect(dimsum?.ports).toEqual(["18800:18800"]);
    expect(dimsum?.volumes).toEqual(["dimsum-data:/app/data"]);
    expect(dimsum?.environment?.DIMSUM_DATABASE_URL).toBeUndefined();
    // Only that service runs without a profile.
    const always = Object.entries(compose.services).filter(([, s]) => !s.profiles);
    expect(always.map(([name]) => name)).toEqual(["dimsum"]);
  });

  it("the team profile: PostgreSQL, Redis, two instances sharing them and one secret key, behind Caddy", () => {
    for (const name of TEAM) expect(compose.services[name]?.profiles, name).toEqual(["team"]);
    const a = compose.services["dimsum-a"];
    const b = compose.services["dimsum-b"];
    expect(a?.environment).toEqual(b?.environment);
    expect(a?.environment?.DIMSUM_DATABASE_URL).toMatch(
      /^postgres:\/\/dimsum:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/dimsum$/,
    );
    expect(a?.environment?.DIMSUM_REDIS_URL).toBe("redis://redis:6379");
    // Required, with no default: compose refuses to start without it rather than invent one per instance.
    expect(a?.environment?.DIMSUM_SECRET_KEY).toMatch(/^\$\{DIMSUM_SECRET_KEY:\?[^}]+\}$/);
    expect(compose.services.postgres?.environment?.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    // Migrations once: the first waits for a healthy database and Redis, the second for the first.
    expect(a?.depends_on).toEqual({
      postgres: { condition: "service_healthy" },
      redis: { condition: "service_healthy" },
    });
    expect(b?.depends_on).toEqual({ "dimsum-a": { condition: "service_healthy" } });
    expect(compose.services.postgres?.healthcheck?.test.join(" ")).toContain("pg_isready");
    expect(compose.services.redis?.healthcheck?.test).toContain("ping");
    // The proxy sends to both, checks their readiness, and is the team's one published port.
    const proxy = compose.services.proxy;
    expect(proxy?.volumes).toContain("./deploy/Caddyfile:/etc/caddy/Caddyfile:ro");
    expect(caddyfile).toMatch(/reverse_proxy dimsum-a:18800 dimsum-b:18800/);
    expect(caddyfile).toContain("health_uri /readyz");
    expect(proxy?.ports).toEqual(["8080:8080"]);
    expect(a?.ports).toBeUndefined();
    expect(b?.ports).toBeUndefined();
  });

  it("keeps every piece of state on a declared named volume", () => {
    const state: Array<[string, string]> = [
      ["dimsum", "/app/data"],
      ["dimsum-a", "/app/data"],
      ["dimsum-b", "/app/data"],
      ["postgres", "/var/lib/postgresql/data"],
      ["redis", "/data"],
      ["proxy", "/data"],
      ["proxy", "/config"],
    ];
    const used = state.map(([service, path]) => volumeAt(compose.services[service], path));
    for (const [i, volume] of used.entries()) expect(volume, state[i]?.join(" ")).toBeDefined();
    expect(new Set(used).size).toBe(used.length);
    expect(Object.keys(compose.volumes).sort()).toEqual([...(used as string[])].sort());
    expect(compose.services.redis?.command).toContain("--appendonly");
  });
});

describe("Dockerfile", () => {
  it("builds in stages from BASE_IMAGE (node:22-slim) and runs as a non-root user with the health probe", () => {
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:22-slim$/m);
    expect(dockerfile.match(/^FROM \$\{BASE_IMAGE\}/gm)?.length).toBe(2);
    // The runtime stage's node_modules come from `npm ci --omit=dev`.
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^COPY --from=deps \/src\/node_modules/m);
    expect(dockerfile).toMatch(/^USER dimsum:dimsum$/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/app\/data"\]$/m);
    expect(dockerfile).toMatch(/DIMSUM_HOME=\/app\/data/);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/readyz/m);
    expect(dockerfile).toMatch(/--port \\"\$\{PORT:-18800\}\\"/);
    expect(dockerfile).toMatch(/org\.opencontainers\.image\.source/);
    // The CA comes in as a build secret; no key, token or password is set in the image.
    expect(dockerfile).toMatch(/--mount=type=secret,id=npm_ca/);
    expect(dockerfile).not.toMatch(/^(ENV|ARG)\b[^\n]*(KEY|TOKEN|PASSWORD|SECRET)\w*=/m);
    const ignored = readFileSync(join(projectRoot, ".dockerignore"), "utf8").split("\n");
    for (const entry of ["node_modules", ".env", ".git", "**/secret.key", ".dimsum"])
      expect(ignored).toContain(entry);
  });
});

describe.skipIf(!postgresAvailable || !redisAvailable)(
  "the team profile's two instances, as processes",
  () => {
    const CLI = resolve(projectRoot, "bin/dimsum.js");
    const PASSWORD = "compose-owner-password";
    let llm: FakeLlmServer;
    let database: { url: string; drop(): Promise<void> };
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      llm = await startFakeLlmServer({ defaultTurn: { text: "answered behind the proxy" } });
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGTERM");
          await exited;
        }),
      );
      await llm?.close();
      await database?.drop();
    });

    /** compose.yaml's environment of `service`, its host names pointed at this machine's servers. */
    function environmentOf(service: string, vars: Record<string, string>): Record<string, string> {
      const env = Object.fromEntries(
        Object.entries(compose.services[service]?.environment ?? {}).map(([k, v]) => [
          k,
          interpolate(v, vars),
        ]),
      );
      const inCompose = new URL(env.DIMSUM_DATABASE_URL ?? "");
      expect(inCompose.host).toBe("postgres:5432");
      expect(inCompose.password).toBe(vars.POSTGRES_PASSWORD);
      // The test database (trust auth on loopback) stands for compose's `postgres` service.
      env.DIMSUM_DATABASE_URL = database.url;
      expect(env.DIMSUM_REDIS_URL).toBe("redis://redis:6379");
      env.DIMSUM_REDIS_URL = REDIS_URL;
      return env;
    }

    async function start(service: string, env: Record<string, string>): Promise<string> {
      const home = tempDir("dimsum-compose-");
      // As the image's CMD does: `dimsum serve --host … --port "$PORT"`; here each on a port of its own.
      const port = String(await freePort());
      const child = spawn(process.execPath, [CLI, "serve", "--port", port], {
        cwd: home,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          DIMSUM_HOME: home,
          ...env,
          PORT: port,
          // What the .env beside compose.yaml gives every instance.
          DIMSUM_OWNER_PASSWORD: PASSWORD,
          DIMSUM_MODEL: "openai:gpt-test",
          OPENAI_API_KEY: "sk-compose-test",
          OPENAI_BASE_URL: `${llm.url}/v1`,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let output = "";
      child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
      const url = `http://127.0.0.1:${port}`;
      // compose's `service_healthy`: the image's HEALTHCHECK asks /readyz.
      for (let i = 0; ; i++) {
        if (child.exitCode !== null) throw new Error(`${service} exited:\n${output}`);
        const ready = await fetch(`${url}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ready) return url;
        if (i > 600) throw new Error(`${service} never became ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    it("start in compose's order on one database, and share sign-ins and conversations", async () => {
      const vars = {
        POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
        DIMSUM_SECRET_KEY: randomBytes(32).toString("base64"),
      };
      const envA = environmentOf("dimsum-a", vars);
      const envB = environmentOf("dimsum-b", vars);
      expect(envB).toEqual(envA);
      expect(envA.DIMSUM_TRUST_PROXY).toBe("1");
      const a = await start("dimsum-a", envA);
      const b = await start("dimsum-b", envB);

      const owner = await login(a.replace(/\/$/, ""), "owner", PASSWORD);
      const created = await call(a, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "compose", agentIds: ["assistant"], userIds: [] },
      });
      expect(created.status).toBe(201);
      const { id: channelId } = (await created.json()) as { id: string };
      const posted = await call(a, `/api/channels/${channelId}/messages`, {
        session: owner,
        body: { text: "@assistant hello" },
      });
      expect(posted.status).toBeLessThan(300);
      // The answer, read through B with A's session: one database behind both.
      for (let i = 0; ; i++) {
        const res = await call(b, `/api/channels/${channelId}/messages`, { session: owner });
        expect(res.status).toBe(200);
        const answer = ((await res.json()) as ChannelMessage[]).find((m) => m.runId && m.text);
        if (answer) {
          expect(answer.text).toBe("answered behind the proxy");
          break;
        }
        if (i > 300) throw new Error("no answer on B within 30 s");
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 120_000);
  },
);

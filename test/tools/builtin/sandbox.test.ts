/** The sandbox's pieces: configuration, the bwrap command line, the probe, the limit prologue. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { defaultToolsConfig } from "../../../src/tools/builtin/defaults.js";
import { toolsConfigForAgent } from "../../../src/tools/builtin/sandbox/agent.js";
import { bwrapArgs } from "../../../src/tools/builtin/sandbox/bwrap-args.js";
import {
  CONTAINER_SANDBOX_HINT,
  type ContainerSigns,
  inContainer,
} from "../../../src/tools/builtin/sandbox/container.js";
import { detectSandbox } from "../../../src/tools/builtin/sandbox/detect.js";
import { limitPrologue } from "../../../src/tools/builtin/sandbox/limits.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "dimsum-sandbox-")));
  dirs.push(dir);
  return dir;
}

describe("sandbox configuration", () => {
  it("passes only allow-listed variables and hides DIMSUM_HOME, the home folder, .env and the config file", () => {
    const cwd = temp();
    writeFileSync(join(cwd, ".env"), "FROM_DOTENV=x\n");
    writeFileSync(
      join(cwd, "dimsum.config.json"),
      JSON.stringify({
        tools: { shell: { sandbox: { env: ["EXTRA"], hide: ["private"], maxProcesses: 32 } } },
      }),
    );
    const config = loadConfig({
      cwd,
      env: {
        DIMSUM_HOME: join(cwd, "home"),
        PATH: "/usr/bin",
        OPENAI_API_KEY: "sk-x",
        EXTRA: "1",
        LANG: "C",
      },
    });
    const sandbox = config.tools.shell.sandbox;
    expect(sandbox.env).toEqual({ PATH: "/usr/bin", LANG: "C", EXTRA: "1" });
    expect(sandbox.hidePaths).toEqual(
      expect.arrayContaining([
        join(cwd, "home"),
        join(cwd, ".env"),
        join(cwd, "dimsum.config.json"),
        join(cwd, "private"),
        join(homedir(), ".ssh"),
        join(homedir(), ".aws"),
      ]),
    );
    expect(sandbox.limits.processes).toBe(32);
    expect(sandbox.network).toBe(false);
    expect(sandbox.allowUnsandboxed).toBe(false);
    expect(sandbox.bwrapPath).toBe("/usr/bin/bwrap");
  });

  it("rejects unknown sandbox settings", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "dimsum.config.json"),
      JSON.stringify({ tools: { shell: { sandbox: { nope: 1 } } } }),
    );
    expect(() => loadConfig({ cwd, env: { DIMSUM_HOME: cwd } })).toThrow(/nope|Unrecognized/);
  });
});

describe("bwrapArgs", () => {
  it("binds the workspace after the private /tmp and masks hidden paths inside it afterwards", () => {
    const ws = temp();
    mkdirSync(join(ws, ".dimsum"));
    writeFileSync(join(ws, ".env"), "");
    const args = bwrapArgs({
      workspace: ws,
      cwd: ws,
      env: { PATH: "/usr/bin" },
      network: false,
      hidePaths: [join(ws, ".dimsum"), join(ws, ".env"), "/nonexistent/place"],
      argv: ["/bin/true"],
    });
    const line = args.join(" ");
    for (const flag of [
      "--unshare-all",
      "--unshare-user",
      "--die-with-parent",
      "--new-session",
      "--clearenv",
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).not.toContain("--share-net");
    expect(line.indexOf("--tmpfs /tmp")).toBeLessThan(line.indexOf(`--bind ${ws} ${ws}`));
    expect(line.indexOf(`--bind ${ws} ${ws}`)).toBeLessThan(line.indexOf(`--tmpfs ${ws}/.dimsum`));
    expect(line).toContain(`--ro-bind /dev/null ${ws}/.env`);
    expect(line).not.toContain("/nonexistent/place");
    expect(line).toContain("--proc /proc");
    expect(args.slice(-2)).toEqual(["--", "/bin/true"]);
    expect(line).not.toMatch(/--(ro-)?bind \/(root|home|run|sys|var) /);
  });

  it("shares the network only when allowed", () => {
    const ws = temp();
    const args = bwrapArgs({ workspace: ws, cwd: ws, env: {}, network: true, hidePaths: [], argv: ["x"] });
    expect(args).toContain("--share-net");
  });
});

describe("detectSandbox", () => {
  it("says what is missing and how to install it", async () => {
    const status = await detectSandbox("/nonexistent/bwrap");
    expect(status.available).toBe(false);
    expect(status.reason).toContain("apt-get install bubblewrap");
  });

  it("names the container options when bubblewrap cannot build the sandbox inside a container", async () => {
    // A bubblewrap that fails the way it does in a default container.
    const dir = temp();
    const bwrap = join(dir, "bwrap");
    writeFileSync(bwrap, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", {
      mode: 0o755,
    });
    const status = await detectSandbox(bwrap);
    expect(status.available).toBe(false);
    expect(status.reason).toContain("No permissions to create new namespace");
    if (inContainer()) expect(status.reason).toContain("--security-opt unmask=ALL");
    else expect(status.reason).toContain("kernel.unprivileged_userns_clone");
  });
});

describe("inContainer", () => {
  const signs = (files: Record<string, string>, env: Record<string, string> = {}): ContainerSigns => ({
    exists: (path) => path in files,
    read: (path) => files[path],
    env,
  });
  it("recognises podman, Docker, container= and Kubernetes, and not a plain host", () => {
    expect(inContainer(signs({ "/run/.containerenv": "" }))).toBe(true);
    expect(inContainer(signs({ "/.dockerenv": "" }))).toBe(true);
    expect(inContainer(signs({}, { container: "podman" }))).toBe(true);
    expect(inContainer(signs({}, { KUBERNETES_SERVICE_HOST: "10.0.0.1" }))).toBe(true);
    expect(inContainer(signs({ "/proc/1/cgroup": "0::/kubepods/besteffort/pod1\n" }))).toBe(true);
    expect(inContainer(signs({ "/proc/1/cgroup": "0::/init.scope\n" }))).toBe(false);
  });
  it("its hint names the options that make bubblewrap work", () => {
    expect(CONTAINER_SANDBOX_HINT).toContain("--security-opt unmask=ALL");
    expect(CONTAINER_SANDBOX_HINT).toContain("--privileged");
  });
});

describe("limitPrologue", () => {
  const limits = { processes: 10, memoryBytes: 1024 * 1024, cpuSeconds: 5, fileBytes: 1024, floodBytes: 1 };
  it("sets CPU time and file size always, processes and memory only without a cgroup", () => {
    const bounded = limitPrologue(limits, { processes: true, memory: true });
    expect(bounded).toContain("ulimit -t 5");
    expect(bounded).toContain("ulimit -f 2");
    expect(bounded).not.toContain("ulimit -p");
    expect(bounded).not.toContain("ulimit -v");
    const unbounded = limitPrologue(limits, { processes: false, memory: false });
    expect(unbounded).toContain("ulimit -p 10");
    expect(unbounded).toContain("ulimit -v 1024");
  });
});

describe("toolsConfigForAgent", () => {
  it("gives the network to the agents the configuration names, and only to them", () => {
    const tools = defaultToolsConfig();
    tools.shell.sandbox.networkAgents = ["researcher"];
    expect(toolsConfigForAgent(tools, { id: "researcher" }).shell.sandbox.network).toBe(true);
    expect(toolsConfigForAgent(tools, { id: "coder" }).shell.sandbox.network).toBe(false);
    expect(tools.shell.sandbox.network).toBe(false);
  });
});

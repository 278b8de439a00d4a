/** The shell sandbox: detection, launch plans and the types the configuration fills in. */

export { toolsConfigForAgent } from "./agent.js";
export { detectSandbox } from "./detect.js";
export { allowedEnv, DEFAULT_ENV_ALLOW, DEFAULT_PATH } from "./env.js";
export { type LaunchPlan, planLaunch } from "./launch.js";
export { DEFAULT_LIMITS } from "./limits.js";
export type { SandboxLimits, SandboxStatus, ShellSandboxConfig } from "./types.js";

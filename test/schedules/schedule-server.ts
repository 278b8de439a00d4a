/**
 * A real server wired as `dimsum serve` wires it (team routes plus schedule routes over one database),
 * its agents on the fake LLM, its scheduler on a fake clock. Closed after each test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createSqliteScheduleStore } from "../../src/schedules/schedule-store.js";
import { createScheduling, type Scheduling } from "../../src/schedules/setup.js";
import { createServer } from "../../src/server/app.js";
import { UserStore } from "../../src/server/auth/user-store.js";
import { buildTeam } from "../../src/server/compose.js";
import { mountScheduleRoutes } from "../../src/server/routes/schedules.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { Team } from "../../src/team/types.js";
import { memoryLog } from "../server/helpers.js";
import { FakeClock } from "./fake-clock.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export interface ScheduleServer {
  url: string;
  home: string;
  db: Database;
  team: Team;
  clock: FakeClock;
  scheduling: Scheduling;
  /** The scheduler's poll: how far to move the clock for it to look at the database again. */
  pollMs: number;
}

const generous = { capacity: 10_000, perMinute: 10_000 };

/** Starts the server on 127.0.0.1:0 with its scheduler running on a fake clock starting at `start`. */
export async function startScheduleServer(
  llmUrl: string,
  start: number | string = "2025-06-02T00:00:00Z",
  staticDir?: string,
): Promise<ScheduleServer> {
  const home = mkdtempSync(join(tmpdir(), "dimsum-schedule-server-"));
  const db = openDatabase(join(home, "dimsum.db"));
  const log = memoryLog();
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test-key-1234",
      OPENAI_BASE_URL: `${llmUrl}/v1`,
    },
  });
  // Each message gets a run of its own here; the queue modes have their own tests.
  config.queue = { ...config.queue, group: "followup" };
  const settings = new SettingsStore(db, openSecretBox(home));
  const team = await buildTeam(
    { db, config, settings, log },
    { streamOptions: { retry: { maxRetries: 0 } } },
  );
  const users = new UserStore(db);
  const clock = new FakeClock(start);
  const pollMs = 15_000;
  const scheduling = createScheduling({
    store: createSqliteScheduleStore(db),
    team,
    clock,
    pollMs,
    actorOf: async (id) => {
      const user = await users.get(id);
      return user ? { userId: user.id, role: user.role } : undefined;
    },
    log,
  });
  const server = createServer({
    db,
    config,
    home,
    log,
    team,
    settings,
    ensureOwner: false,
    // The CLI tests run `dimsum schedule` in this thread on a second connection: while a turn's
    // shared transaction holds the write lock, that connection's busy wait would block the very
    // thread that has to commit. Real CLI processes have threads of their own.
    groupCommit: false,
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: staticDir ?? join(home, "no-web-build"),
    rateLimits: {
      loginPerIp: generous,
      messagePerUser: generous,
      messagePerIp: generous,
    },
    routes: [mountTeamRoutes({ team }), mountScheduleRoutes(scheduling.service)],
  });
  const listening = await server.listen(0, "127.0.0.1");
  await scheduling.scheduler.start();
  cleanups.push(async () => {
    await listening.close();
    await scheduling.scheduler.stop();
    await team.close();
    db.close();
    rmSync(home, { recursive: true, force: true });
  });
  return { url: listening.url, home, db, team, clock, scheduling, pollMs };
}

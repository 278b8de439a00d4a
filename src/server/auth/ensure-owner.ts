/** First start: make sure an owner account exists, with a password from the env or a printed one. */
import { DimsumError } from "../../errors.js";
import type { ServerLog } from "../context.js";
import { randomPassword } from "./secrets.js";
import type { UserRepository } from "./user-store.js";

export const OWNER_USERNAME = "owner";

export interface OwnerCreated {
  username: string;
  /** Set only when it was generated (and so must be shown once); undefined when it came from the env. */
  generatedPassword: string | undefined;
}

/**
 * Creates the `owner` account when no account exists: password `DIMSUM_OWNER_PASSWORD` if set, else a
 * random one written once to the log. Returns what was created, or undefined when accounts exist.
 */
export async function ensureOwner(
  users: UserRepository,
  configured: string | undefined,
  log: ServerLog,
): Promise<OwnerCreated | undefined> {
  if ((await users.count()) > 0) return undefined;
  const fromEnv = configured;
  if (fromEnv !== undefined && fromEnv.length < 8) {
    throw new DimsumError("config", "DIMSUM_OWNER_PASSWORD is shorter than 8 characters", {
      hint: "choose a longer password, or unset it to get a random one printed at start",
    });
  }
  const password = fromEnv || randomPassword();
  const user = await users.createFirst(
    { username: OWNER_USERNAME, password },
    { oneTimePassword: fromEnv === undefined || fromEnv === "" },
  );
  if (!user) return undefined; // another process created the first account meanwhile
  if (fromEnv) {
    log.info(`created the owner account "${OWNER_USERNAME}" with the password from DIMSUM_OWNER_PASSWORD`);
    return { username: OWNER_USERNAME, generatedPassword: undefined };
  }
  log.info(
    `created the owner account "${OWNER_USERNAME}" with the one-time password: ${password}\n` +
      "  (shown only now; sign in with it and the web UI opens Settings → Account (/settings/account), where you choose your own)",
  );
  return { username: OWNER_USERNAME, generatedPassword: password };
}

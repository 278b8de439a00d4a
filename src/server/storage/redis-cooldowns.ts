/**
 * The model chains' provider cooldowns in Redis, so every instance skips a provider one of them saw
 * failing. One key per provider (`dimsum:cooldown:<provider>`), expiring with the cooldown; a longer
 * cooldown is never shortened (one Lua script, so instances racing see one value).
 */
import type { Redis as RedisClient } from "ioredis";
import type { Cooldown, CooldownStore } from "../../llm/cooldowns.js";
import { connectRedis } from "../../store/redis/redis-connection.js";

const SET_LONGER = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, parsed = pcall(cjson.decode, current)
  if ok and tonumber(parsed['until']) and tonumber(parsed['until']) >= tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

export interface RedisCooldowns extends CooldownStore {
  close(): Promise<void>;
}

const keyOf = (provider: string) => `dimsum:cooldown:${provider}`;

/** Cooldowns on an open client; `now` is this instance's clock (cooldowns are minutes long, clock skew does not matter). */
export function redisCooldowns(client: RedisClient, now: () => number = Date.now): RedisCooldowns {
  // A named command: ioredis sends the script once and then calls it by its SHA (EVALSHA).
  if (!("dimsumSetLongerCooldown" in client)) {
    client.defineCommand("dimsumSetLongerCooldown", { numberOfKeys: 1, lua: SET_LONGER });
  }
  const scripted = client as RedisClient & {
    dimsumSetLongerCooldown(key: string, value: string, until: string, ttlMs: string): Promise<number>;
  };
  return {
    async get(provider) {
      const raw = await client.get(keyOf(provider));
      if (raw === null) return undefined;
      try {
        const parsed = JSON.parse(raw) as Cooldown;
        return parsed.until > now() ? parsed : undefined;
      } catch {
        return undefined;
      }
    },
    async set(provider, cooldown) {
      const ttl = Math.max(1, Math.ceil(cooldown.until - now()));
      await scripted.dimsumSetLongerCooldown(
        keyOf(provider),
        JSON.stringify(cooldown),
        String(cooldown.until),
        String(ttl),
      );
    },
    async clear(provider) {
      await client.del(keyOf(provider));
    },
    async close() {
      client.disconnect();
    },
  };
}

/** Connects (fail fast: a chain without Redis still answers, with no cooldown known). */
export async function openRedisCooldowns(url: string): Promise<RedisCooldowns> {
  return redisCooldowns(await connectRedis(url, { failFast: true, purpose: "for the model cooldowns" }));
}

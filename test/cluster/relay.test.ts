/**
 * The Redis relay between instances: messages arrive at the others (never back at the sender) in
 * send order; a question is answered by the one instance holding what it is about, refused with its
 * reason, or a 404 when nobody has it; a poll collects the parts of the instances it asks (and ends
 * in time when one is gone); an unreachable Redis is a config error naming the fix.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DimsumError, forbidden } from "../../src/errors.js";
import { type MessageRelay, openRedisRelay } from "../../src/store/redis/redis-relay.js";
import { EventBus, MembershipIndex } from "../../src/team/event-bus.js";
import {
  joinRelay,
  type RelayPoll,
  type RelayQuestion,
  type TeamRelayMessage,
} from "../../src/team/team-relay.js";
import type { ChannelRepository } from "../../src/team/team-store.js";
import type { ElicitationView } from "../../src/team/types.js";
import { REDIS_URL, redisAvailable, testChannel } from "../support/redis.js";

const opened: Array<MessageRelay<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

async function relay<T>(channel: string): Promise<MessageRelay<T>> {
  const r = await openRedisRelay<T>(REDIS_URL, { channel });
  opened.push(r as MessageRelay<unknown>);
  return r;
}

const view = (id: string): ElicitationView => ({
  id,
  channelId: "c1",
  runId: "r1",
  userId: "alice",
  server: "everything",
  message: "Your name?",
  mode: "form",
  expiresAt: 0,
});

function wire(
  r: MessageRelay<TeamRelayMessage>,
  answer: (q: RelayQuestion) => ElicitationView | undefined,
  poll: (p: RelayPoll) => ElicitationView[] = () => [],
) {
  const members = new MembershipIndex();
  return joinRelay(r, {
    bus: new EventBus(members),
    members,
    channels: { get: async () => undefined } as unknown as ChannelRepository,
    cancelRun: () => undefined,
    answer,
    poll,
    onError: () => undefined,
  });
}

describe.skipIf(!redisAvailable)("Redis relay", () => {
  it("delivers to the other instances in send order, never back to the sender", async () => {
    const channel = testChannel();
    const a = await relay<number>(channel);
    const b = await relay<number>(channel);
    const c = await relay<number>(channel);
    const seen = { a: [] as number[], b: [] as number[], c: [] as number[] };
    a.subscribe((n) => seen.a.push(n));
    b.subscribe((n) => seen.b.push(n));
    c.subscribe((n) => seen.c.push(n));
    for (let i = 0; i < 500; i++) a.publish(i);
    const expected = Array.from({ length: 500 }, (_, i) => i);
    await expect.poll(() => seen.c.length, { timeout: 5000 }).toBe(500);
    await expect.poll(() => seen.b.length, { timeout: 5000 }).toBe(500);
    expect(seen.b).toEqual(expected);
    expect(seen.c).toEqual(expected);
    expect(seen.a).toEqual([]);
    expect(a.instanceId).not.toBe(b.instanceId);
  });

  it("answers a question where the request is held, passes refusals on, and 404s the unknown", async () => {
    const channel = testChannel();
    const holder = wire(await relay<TeamRelayMessage>(channel), (q) => {
      if (q.id === "mine") return view("mine");
      if (q.id === "not-yours") throw forbidden("Only alice may answer.");
      return undefined;
    });
    const bystander = wire(await relay<TeamRelayMessage>(channel), () => undefined);
    const asker = wire(await relay<TeamRelayMessage>(channel), () => undefined);
    const question = (id: string): RelayQuestion => ({
      kind: "answer_elicitation",
      actor: { userId: "alice", role: "member" },
      runId: "r1",
      id,
      answer: { action: "decline" },
    });
    expect(await asker.ask(question("mine"))).toEqual(view("mine"));
    const refused = await asker.ask(question("not-yours")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DimsumError);
    expect((refused as DimsumError).code).toBe("forbidden");
    const missing = await asker.ask(question("nobody")).catch((e: unknown) => e);
    expect((missing as DimsumError).code).toBe("not_found");
    for (const joined of [holder, bystander, asker]) joined.leave();
  });

  it("gathers a poll's parts from the instances asked, and ends in time when one never answers", async () => {
    const channel = testChannel();
    const asked: string[] = [];
    const part =
      (name: string, views: ElicitationView[]) =>
      (p: RelayPoll): ElicitationView[] => {
        asked.push(`${name}:${p.channelId}`);
        return views;
      };
    const ra = await relay<TeamRelayMessage>(channel);
    const rb = await relay<TeamRelayMessage>(channel);
    const rc = await relay<TeamRelayMessage>(channel);
    const a = wire(ra, () => undefined, part("a", [view("a1"), view("a2")]));
    const b = wire(rb, () => undefined, part("b", [view("b1")]));
    const c = wire(rc, () => undefined, part("c", [view("c1")]));
    const poll: RelayPoll = {
      kind: "list_elicitations",
      actor: { userId: "alice", role: "member" },
      channelId: "c1",
    };
    const both = await c.gather(poll, [ra.instanceId, rb.instanceId]);
    expect(both.map((v) => v.id).sort()).toEqual(["a1", "a2", "b1"]);
    // Only the instances named answer.
    expect(asked.sort()).toEqual(["a:c1", "b:c1"]);
    expect(await c.gather(poll, [])).toEqual([]);
    const partial = await c.gather(poll, [rb.instanceId, "an-instance-that-died"]);
    expect(partial.map((v) => v.id)).toEqual(["b1"]);
    for (const joined of [a, b, c]) joined.leave();
  });

  it("says how to fix an unreachable Redis, without the password", async () => {
    const err = await openRedisRelay("redis://:hunter2@127.0.0.1:1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DimsumError);
    expect((err as DimsumError).code).toBe("config");
    expect((err as DimsumError).message).not.toContain("hunter2");
    expect((err as DimsumError).hint).toContain("DIMSUM_REDIS_URL");
  });
});

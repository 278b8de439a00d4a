/**
 * The run side of the team facade: a chat's runs and their spend, a run's state, trace, stop and
 * approvals, requests for input, collaboration flows, and direct /v1 completions.
 */

import { forbidden, invalid, notFound } from "../errors.js";
import { assertCanManage, assertNotGuest, canSeeChannel, isAdmin } from "./access.js";
import { sinceDays, spendReport } from "./spend.js";
import type { TeamParts } from "./team-parts.js";
import type { StoredRun } from "./team-store.js";
import type { Actor, FlowRecord, MessagePart, Team } from "./types.js";

/** The team's methods on runs, flows, approvals and requests for input. */
export function runSide(
  parts: TeamParts,
): Pick<
  Team,
  | "listChannelRuns"
  | "spend"
  | "getRun"
  | "runQueue"
  | "cancelRun"
  | "getRunTrace"
  | "getFlow"
  | "flowAction"
  | "complete"
  | "answerApproval"
  | "listApprovalGrants"
  | "revokeApprovalGrant"
  | "answerElicitation"
  | "listElicitations"
> {
  const {
    ready,
    store,
    sessions,
    runs,
    runner,
    handoffs,
    approvals,
    flows,
    channels,
    agents,
    elicitations,
    relay,
    cluster,
    leases,
    nameOf,
    now,
    emit,
  } = parts;

  async function visibleRun(actor: Actor, runId: string): Promise<StoredRun> {
    const stored = await store.runs.get(runId);
    // A run the caller may not see does not exist for them: the same 404, naming nothing.
    const missing = () => notFound(`No run with id "${runId}".`);
    if (!stored) throw missing();
    if (stored.run.channelId === "") {
      if (!isAdmin(actor) && stored.requestedBy !== actor.userId) throw missing();
    } else if (!(await channelVisible(actor, stored.run.channelId))) {
      throw missing();
    }
    return stored;
  }

  /** Whether the channel exists and the actor may see it. */
  async function channelVisible(actor: Actor, channelId: string): Promise<boolean> {
    const channel = await store.channels.get(channelId);
    return channel !== undefined && canSeeChannel(actor, channel);
  }

  /** The flow if the actor may see its channel; otherwise the same 404 as a missing flow. */
  async function visibleFlow(actor: Actor, flowId: string) {
    const flow = await flows.get(flowId);
    if (!(await channelVisible(actor, flow.channelId))) throw notFound(`No flow with id "${flowId}".`);
    return flow;
  }

  /** The chat shows a step's output as edited: the step's message text becomes the new output. */
  async function showEditedOutput(actor: Actor, flow: FlowRecord, stepIndex: number): Promise<void> {
    const step = flow.steps[stepIndex];
    if (!step?.runId || step.output === undefined) return;
    const posted = await store.messages.byRun(step.runId);
    if (!posted || posted.text === step.output) return;
    // Tool calls and reasoning stay; the text is what was edited, and by whom.
    const name = (await nameOf([actor.userId]))(actor.userId);
    const parts: MessagePart[] = [
      ...posted.parts.filter((p) => p.type !== "text" && p.type !== "edited"),
      { type: "text", text: step.output },
      { type: "edited", by: actor.userId, name },
    ];
    const message = await store.messages.edit(posted.id, step.output, now(), parts);
    if (message) emit({ type: "message", channelId: flow.channelId, message });
  }

  return {
    async listChannelRuns(actor, channelId) {
      await ready;
      await channels.visible(actor, channelId);
      return (await store.runs.listUsage({ since: 0, channelId })).map((s) => s.run);
    },
    async spend(actor, options) {
      await ready;
      const since = sinceDays(Date.now(), options.days);
      const all = isAdmin(actor);
      const stored = await store.runs.listUsage(all ? { since } : { since, requestedBy: actor.userId });
      return spendReport(
        stored.map((s) => s.run),
        since,
        all ? "all" : "own",
      );
    },
    async getRun(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      if (stored.run.status === "waiting") {
        return { ...stored.run, pendingApprovals: await approvals.pending(stored) };
      }
      const live = runs.snapshot(runId);
      if (!live) return stored.run;
      const parts = runner.liveParts(runId);
      return parts ? { ...live, live: parts } : live;
    },
    runQueue(actor) {
      if (!isAdmin(actor)) throw forbidden("Only owners and admins can see the run queue.", "ask an admin");
      return runs.queueStats();
    },
    async cancelRun(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      const reason = `Cancelled by ${(await nameOf([actor.userId]))(actor.userId)}.`;
      runner.dropUnread(runId);
      // A person's Stop ends the hand-off chain the run belongs to.
      if (stored.run.depth === 0 && stored.run.channelId !== "") await handoffs.stopped(stored.run, reason);
      const cancelled = await runs.cancel(runId, reason);
      if (cancelled) return cancelled;
      if (stored.run.status === "waiting")
        return (await approvals.cancelWaiting(stored, reason)) ?? stored.run;
      // Live on another instance: that one cancels it and announces the end.
      if (cluster?.relay && (stored.run.status === "queued" || stored.run.status === "running")) {
        cluster.relay.publish({ type: "cancel_run", runId, reason });
      }
      return stored.run;
    },
    async getRunTrace(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      return (await sessions.getRunEvents(stored.ref, runId)).map((e) => e.payload);
    },
    async getFlow(actor, flowId) {
      await ready;
      return visibleFlow(actor, flowId);
    },
    async flowAction(actor, flowId, action) {
      await ready;
      const flow = await visibleFlow(actor, flowId);
      assertCanManage(actor, await channels.require(flow.channelId));
      const next = await flows.act(flowId, action);
      if (action.action === "edit") await showEditedOutput(actor, next, action.stepIndex);
      return next;
    },
    async complete(actor, agentId, messages, options = {}) {
      await ready;
      assertNotGuest(actor, "talk to agents through the API");
      const agent = await agents.require(agentId, actor);
      const last = messages.at(-1);
      if (last?.role !== "user") throw invalid("The conversation must end with a user message.");
      if (typeof last.content === "string" ? last.content.trim() === "" : last.content.length === 0) {
        throw invalid("The last user message is empty; send some text.");
      }
      const system = messages.flatMap((m) => (m.role === "system" ? [m.content] : []));
      const history = messages.slice(0, -1).filter((m) => m.role !== "system");
      return runner.complete(actor.userId, agent, system, history, last.content, options);
    },
    async answerApproval(actor, runId, callId, answer) {
      await ready;
      const stored = await visibleRun(actor, runId);
      return approvals.answer(actor, stored, callId, answer);
    },
    async listApprovalGrants(actor, channelId) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      return store.grants.list(channel.id);
    },
    async revokeApprovalGrant(actor, channelId, agentId, tool) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      const grant = (await store.grants.list(channel.id)).find(
        (g) => g.agentId === agentId && g.tool === tool,
      );
      if (!grant) throw notFound(`@${agentId} has no standing approval for ${tool} in this chat.`);
      if (grant.grantedBy !== actor.userId) assertCanManage(actor, channel);
      await store.grants.delete(channel.id, agentId, tool);
    },
    async answerElicitation(actor, runId, id, answer) {
      await ready;
      // Asked by a run on another instance: that instance holds the request.
      if (relay && !elicitations.has(runId, id))
        return relay.ask({ kind: "answer_elicitation", actor, runId, id, answer });
      return elicitations.answer(actor, runId, id, answer);
    },
    async listElicitations(actor, channelId) {
      await ready;
      await channels.visible(actor, channelId);
      const here = elicitations.openFor(actor, channelId);
      if (!relay || !leases || !cluster) return here;
      // Runs of this channel that other instances hold may be waiting for this person too.
      const others = (await leases.ownersIn(channelId)).filter((owner) => owner !== cluster.instanceId);
      return [...here, ...(await relay.gather({ kind: "list_elicitations", actor, channelId }, others))];
    },
  };
}

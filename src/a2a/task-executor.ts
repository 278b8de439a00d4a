/**
 * Runs an A2A task as a Dimsum agent run: the task's messages become the conversation, the answer
 * streams out as appended chunks of one `answer` artifact, and the task ends completed (with the whole
 * answer as its status message), failed, or cancelled. Who asks and which agent answers come with the
 * call (see `A2A_CALL`), so one executor serves every agent and person.
 */
import type { Message, Part } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent as A2AEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";

/** One turn of the conversation handed to the agent. */
export interface ConversationTurn {
  role: "user" | "assistant";
  content: string;
}

/** Runs the agent for the caller: the answer, with each piece of text as it streams. */
export type AgentCall = (
  conversation: ConversationTurn[],
  options: { signal: AbortSignal; onDelta: (text: string) => void },
) => Promise<{ text: string }>;

/** The key of the call's `AgentCall` in `ServerCallContext.state`. */
export const A2A_CALL = "dimsum.a2a.call";

const ANSWER = "answer";

/** The text of a message's parts (text parts; data parts as JSON). */
export function textOfA2aParts(parts: readonly Part[]): string {
  return parts
    .map((part) => {
      const content = part.content;
      if (content?.$case === "text") return content.value;
      if (content?.$case === "data") return JSON.stringify(content.value);
      if (content?.$case === "url") return content.value;
      return "";
    })
    .filter((t) => t !== "")
    .join("\n");
}

function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  };
}

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function conversationOf(context: RequestContext): ConversationTurn[] {
  const earlier = context.task?.history ?? [];
  const newest = context.userMessage;
  const all = earlier.some((m) => m.messageId === newest.messageId) ? earlier : [...earlier, newest];
  return all
    .map(
      (m): ConversationTurn => ({
        role: m.role === Role.ROLE_AGENT ? "assistant" : "user",
        content: textOfA2aParts(m.parts),
      }),
    )
    .filter((t) => t.content.trim() !== "");
}

/** The executor behind every Dimsum agent's A2A endpoint. */
export class DimsumTaskExecutor implements AgentExecutor {
  readonly #running = new Map<string, { abort: AbortController; contextId: string }>();

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    const now = () => new Date().toISOString();
    const status = (state: TaskState, message?: Message) =>
      A2AEvent.statusUpdate({
        taskId,
        contextId,
        status: { state, message, timestamp: now() },
        metadata: undefined,
      });
    if (!context.task) {
      bus.publish(
        A2AEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
    }
    const call = context.context.state.get(A2A_CALL) as AgentCall | undefined;
    if (!call) {
      bus.publish(status(TaskState.TASK_STATE_FAILED, agentMessage(taskId, contextId, "No caller.")));
      return;
    }
    const conversation = conversationOf(context);
    if (conversation.at(-1)?.role !== "user") {
      const refusal = "Send a message with text for the agent to answer.";
      bus.publish(status(TaskState.TASK_STATE_REJECTED, agentMessage(taskId, contextId, refusal)));
      return;
    }
    const abort = new AbortController();
    this.#running.set(taskId, { abort, contextId });
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    let chunks = 0;
    const chunk = (text: string, lastChunk: boolean) => {
      bus.publish(
        A2AEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: ANSWER,
            name: ANSWER,
            description: "The agent's answer",
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
          },
          append: chunks > 0,
          lastChunk,
          metadata: undefined,
        }),
      );
      chunks++;
    };
    try {
      const result = await call(conversation, {
        signal: abort.signal,
        onDelta: (text) => {
          if (text !== "" && !abort.signal.aborted) chunk(text, false);
        },
      });
      if (abort.signal.aborted) return;
      // An answer that did not stream arrives whole; a streamed one is closed by an empty last chunk.
      chunk(chunks === 0 ? result.text : "", true);
      bus.publish(status(TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, result.text)));
    } catch (err) {
      // A cancelled task was ended by `cancelTask`.
      if (abort.signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      bus.publish(status(TaskState.TASK_STATE_FAILED, agentMessage(taskId, contextId, message)));
    } finally {
      this.#running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    running?.abort.abort(new Error("The A2A client cancelled the task."));
    this.#running.delete(taskId);
    bus.publish(
      A2AEvent.statusUpdate({
        taskId,
        contextId: running?.contextId ?? "",
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
  };
}

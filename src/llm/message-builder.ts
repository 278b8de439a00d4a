/** Accumulates streamed deltas into the canonical assistant message that `done` carries. */
import type { AssistantMessage, ReasoningPart, TextPart, ToolCall } from "./types.js";

export class AssistantMessageBuilder {
  private readonly parts: AssistantMessage["content"] = [];

  /** Appends text, merging with a directly preceding text part. */
  text(delta: string, signature?: string): void {
    const last = this.parts.at(-1);
    if (last?.type === "text" && last.signature === undefined) {
      last.text += delta;
      if (signature !== undefined) last.signature = signature;
      return;
    }
    if (delta === "" && signature === undefined) return;
    const part: TextPart = { type: "text", text: delta };
    if (signature !== undefined) part.signature = signature;
    this.parts.push(part);
  }

  /** Appends reasoning text, merging with a directly preceding, unsigned reasoning part. */
  reasoning(delta: string): void {
    const last = this.parts.at(-1);
    if (last?.type === "reasoning" && last.signature === undefined && last.redactedData === undefined) {
      last.text += delta;
      return;
    }
    if (delta === "") return;
    this.parts.push({ type: "reasoning", text: delta });
  }

  /** Sets the signature of the latest reasoning part (Anthropic sends it after the thinking deltas). */
  reasoningSignature(signature: string): void {
    const last = this.parts.at(-1);
    if (last?.type === "reasoning") {
      last.signature = (last.signature ?? "") + signature;
      return;
    }
    const part: ReasoningPart = { type: "reasoning", text: "", signature };
    this.parts.push(part);
  }

  redactedReasoning(data: string): void {
    this.parts.push({ type: "reasoning", text: "", redactedData: data });
  }

  toolCall(call: ToolCall): void {
    this.parts.push({ type: "tool_call", ...call });
  }

  get toolCalls(): ToolCall[] {
    return this.parts.filter((p) => p.type === "tool_call");
  }

  build(): AssistantMessage {
    return {
      role: "assistant",
      content: this.parts.filter((p) => !(p.type === "text" && p.text === "" && !p.signature)),
    };
  }
}

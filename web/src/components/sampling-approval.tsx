/**
 * An MCP server's request to use the agent's model (sampling), inline in the run that asked: the
 * server, the model, the token limit, the system prompt and the conversation it wants answered.
 * Approve lets the agent's own model answer it; Decline refuses it.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import type { ElicitationAnswer, ElicitationView } from "../types.js";

/** The inline approval card of one sampling request. */
export function SamplingApproval({ request }: { request: ElicitationView }) {
  const { api } = useServices();
  const [problem, setProblem] = useState<string | undefined>();
  const [sending, setSending] = useState(false);
  const card = useRef<HTMLElement>(null);
  // The question waits for the person: bring it into view when it arrives.
  useEffect(() => {
    card.current?.scrollIntoView?.({ block: "nearest" });
  }, []);
  const sampling = request.sampling;

  const send = async (answer: ElicitationAnswer) => {
    setSending(true);
    setProblem(undefined);
    try {
      await api.answerElicitation(request.runId, request.id, answer);
      // The closing event removes the card.
    } catch (err) {
      setProblem(errorText(err));
      setSending(false);
    }
  };

  return (
    <section
      ref={card}
      class="elicit sampling"
      data-testid="sampling"
      data-elicitation-id={request.id}
      aria-label={`${request.server} asks to use the agent's model`}
    >
      <p class="elicit-from muted">
        <span aria-hidden="true">🔌 </span>
        <strong>{request.server}</strong> asks to use the agent's model
      </p>
      {sampling && (
        <>
          <p class="sampling-meta muted" data-testid="sampling-meta">
            Model <strong>{sampling.model}</strong>
            {" · up to "}
            <strong>{sampling.maxTokens}</strong> tokens
          </p>
          {sampling.systemPrompt && (
            <div class="sampling-turn sampling-system" data-testid="sampling-system">
              <span class="sampling-role">System prompt</span>
              <p class="sampling-text">{sampling.systemPrompt}</p>
            </div>
          )}
          <ol class="sampling-messages">
            {sampling.messages.map((message, i) => (
              <li
                // The conversation is fixed for the request's life.
                key={i}
                class={`sampling-turn sampling-${message.role}`}
                data-testid="sampling-message"
                data-role={message.role}
              >
                <span class="sampling-role">{message.role === "assistant" ? "Assistant" : "User"}</span>
                <p class="sampling-text">{message.text}</p>
              </li>
            ))}
          </ol>
        </>
      )}
      {problem && (
        <p class="elicit-error" role="alert" data-testid="sampling-problem">
          {problem}
        </p>
      )}
      <div class="elicit-actions">
        <button
          type="button"
          class="btn btn-small btn-primary"
          disabled={sending}
          onClick={() => void send({ action: "accept" })}
          data-testid="sampling-approve"
        >
          Approve
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={sending}
          onClick={() => void send({ action: "decline" })}
          data-testid="sampling-decline"
        >
          Decline
        </button>
      </div>
    </section>
  );
}

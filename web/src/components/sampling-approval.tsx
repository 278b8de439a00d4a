/**
 * An MCP server's request to use the agent's model (sampling), inline in the run that asked: the
 * server, the model, the token limit, the system prompt and the conversation it wants answered.
 * Approve lets the agent's own model answer it; Decline refuses it.
 */

import { t } from "../i18n/index.js";
import type { ElicitationView } from "../types.js";
import { useRequestAnswer } from "./use-request-answer.js";

/** The inline approval card of one sampling request. */
export function SamplingApproval({ request }: { request: ElicitationView }) {
  const { send, sending, problem, card } = useRequestAnswer<HTMLElement>(request);
  const sampling = request.sampling;

  return (
    <section
      ref={card}
      class="elicit sampling"
      data-testid="sampling"
      data-elicitation-id={request.id}
      aria-label={t("sampling.label", { server: request.server })}
    >
      <p class="elicit-from muted">
        <span aria-hidden="true">🔌 </span>
        <strong>{request.server}</strong>
        {t("sampling.asksAfter")}
      </p>
      {sampling && (
        <>
          <p class="sampling-meta muted" data-testid="sampling-meta">
            {t("sampling.model")} <strong>{sampling.model}</strong>
            {t("sampling.upTo")}
            <strong>{sampling.maxTokens}</strong> {t("sampling.tokens")}
          </p>
          {sampling.systemPrompt && (
            <div class="sampling-turn sampling-system" data-testid="sampling-system">
              <span class="sampling-role">{t("sampling.system")}</span>
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
                <span class="sampling-role">
                  {message.role === "assistant" ? t("sampling.assistant") : t("sampling.user")}
                </span>
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
          {t("approval.approve")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={sending}
          onClick={() => void send({ action: "decline" })}
          data-testid="sampling-decline"
        >
          {t("sampling.decline")}
        </button>
      </div>
    </section>
  );
}

/**
 * The home page's composer, as in ChatGPT: pick an agent, write, and a new direct chat opens with
 * the message sent (named after its first exchange).
 */
import { useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { distinctName } from "./new-channel-form.js";

/** The composer. */
export function HomeComposer() {
  const { api, store, navigate } = useServices();
  const agents = useSelector((s) => s.agents);
  const channels = useSelector((s) => s.channels.list);
  const [agentId, setAgentId] = useState("");
  const [text, setText] = useState("");
  const chosen =
    agents.find((a) => a.id === agentId) ?? agents.find((a) => a.id === "assistant") ?? agents[0];
  const [start, busy] = useAction(async () => {
    const body = text.trim();
    if (!chosen || body === "") return;
    const channel = await api.createChannel({
      kind: "direct",
      name: distinctName(
        chosen.name,
        channels.map((c) => c.name),
      ),
      agentIds: [chosen.id],
      userIds: [],
    });
    store.dispatch({ type: "channel_saved", channel });
    navigate({ name: "channel", channelId: channel.id });
    const result = await api.postMessage(channel.id, body);
    store.dispatch({ type: "posted", channelId: channel.id, result });
    setText("");
  });
  if (agents.length === 0) return null;
  return (
    <form
      class="home-composer"
      data-testid="home-composer"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <textarea
        class="composer-input home-composer-input"
        rows={2}
        placeholder={`Ask ${chosen?.name ?? "an agent"} anything…`}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void start();
          }
        }}
        data-testid="home-composer-input"
      />
      <div class="home-composer-row">
        <label class="home-composer-agent">
          <span class="muted">Chat with</span>
          <select
            value={chosen?.id ?? ""}
            onChange={(e) => setAgentId(e.currentTarget.value)}
            data-testid="home-composer-agent"
          >
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="submit"
          class="btn btn-primary"
          disabled={busy || text.trim() === ""}
          data-testid="home-composer-send"
        >
          Start chat
        </button>
      </div>
    </form>
  );
}

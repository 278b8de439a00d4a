/** Create a connector: type, name, the agent that answers, and the type's settings and secrets. */
import { useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import {
  CONNECTOR_LABELS,
  type ConnectorType,
  connectorApi,
  type FieldValues,
  fieldsToBody,
  missingFields,
} from "./connector-api.js";
import { ConnectorFields, ConnectorGuide } from "./connector-fields.js";

const TYPES = Object.keys(CONNECTOR_LABELS) as ConnectorType[];

/** The create form; `onCreated` reloads the list. */
export function ConnectorCreateForm({ onCreated }: { onCreated: () => void }) {
  const { api, store } = useServices();
  const agents = useSelector((s) => s.agents);
  const [type, setType] = useState<ConnectorType>("telegram");
  const [name, setName] = useState("");
  const [agentId, setAgentId] = useState("");
  const [values, setValues] = useState<FieldValues>({});
  const chosenAgent = agentId || agents[0]?.id || "";
  const missing = missingFields(type, values);

  const [create, creating] = useAction(async () => {
    if (!name.trim()) throw new Error("Give the connector a name.");
    if (missing.length > 0) throw new Error(`Fill in: ${missing.join(", ")}.`);
    const created = await connectorApi(api).create({
      type,
      name: name.trim(),
      agentId: chosenAgent,
      ...fieldsToBody(type, values),
    });
    store.dispatch({
      type: "notice",
      kind: "info",
      text: `Connector "${created.name}" created; start it when ready.`,
    });
    setName("");
    setValues({});
    onCreated();
  });

  return (
    <form
      class="form"
      data-testid="connector-create"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3>New connector</h3>
      <div class="form-grid">
        <label class="field">
          <span>Platform</span>
          <select
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value as ConnectorType);
              setValues({});
            }}
            data-testid="connector-type"
          >
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {CONNECTOR_LABELS[t]}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Name *</span>
          <input
            value={name}
            maxLength={60}
            placeholder="Support bot"
            onInput={(e) => setName(e.currentTarget.value)}
            data-testid="connector-name"
          />
        </label>
        <label class="field">
          <span>Agent that answers</span>
          <select
            value={chosenAgent}
            onChange={(e) => setAgentId(e.currentTarget.value)}
            data-testid="connector-agent"
          >
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name} (@{a.id})
              </option>
            ))}
          </select>
        </label>
      </div>
      <ConnectorGuide type={type} />
      <ConnectorFields type={type} values={values} onChange={setValues} />
      <p class="muted">
        Secrets are stored encrypted on the server and never shown again. Each external person becomes a guest
        user; each external chat becomes a direct chat with the agent.
      </p>
      <div class="form-actions">
        <button
          type="submit"
          class="btn btn-primary"
          disabled={creating || !chosenAgent}
          data-testid="connector-create-submit"
        >
          Create connector
        </button>
      </div>
    </form>
  );
}

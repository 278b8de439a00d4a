/** One connector: status, inbound URL, outbox counts, start/stop/test/delete, and an editor. */

import { useState } from "preact/hooks";
import { formatTime } from "../format.js";
import { useAction, useServices } from "../hooks.js";
import { askConfirm } from "./confirm-dialog.js";
import {
  CONNECTOR_LABELS,
  type ConnectorView,
  connectorApi,
  type FieldValues,
  fieldsToBody,
  takesInbound,
  visibleFields,
} from "./connector-api.js";
import { ConnectorChats } from "./connector-chats.js";
import { ConnectorFields, valuesOf } from "./connector-fields.js";

const STATE_BADGE: Record<ConnectorView["status"]["state"], string> = {
  running: "badge badge-ok",
  starting: "badge badge-running",
  failing: "badge badge-error",
  stopped: "badge badge-cancelled",
  error: "badge badge-error",
};

function ConnectorEditor({ view, onSaved }: { view: ConnectorView; onSaved: () => void }) {
  const { api, store } = useServices();
  const [name, setName] = useState(view.name);
  const [values, setValues] = useState<FieldValues>(() => valuesOf(view));
  const [save, saving] = useAction(async () => {
    await connectorApi(api).update(view.id, { name: name.trim(), ...fieldsToBody(view.type, values, view) });
    store.dispatch({ type: "notice", kind: "info", text: `Connector "${name.trim()}" saved.` });
    onSaved();
  });
  return (
    <form
      class="form"
      data-testid="connector-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label class="field">
        <span>Name</span>
        <input
          value={name}
          maxLength={60}
          onInput={(e) => setName(e.currentTarget.value)}
          data-testid="connector-edit-name"
        />
      </label>
      <ConnectorFields type={view.type} values={values} onChange={setValues} stored={view} />
      <div class="form-actions">
        <button
          type="submit"
          class="btn btn-primary btn-small"
          disabled={saving}
          data-testid="connector-save"
        >
          Save{view.status.state === "running" || view.status.state === "failing" ? " and restart" : ""}
        </button>
      </div>
    </form>
  );
}

/** A connector in the list. */
export function ConnectorRow({ view, onChanged }: { view: ConnectorView; onChanged: () => void }) {
  const { api, store } = useServices();
  const client = connectorApi(api);
  const [editing, setEditing] = useState(false);
  const [showChats, setShowChats] = useState(false);
  const running =
    view.status.state === "running" || view.status.state === "starting" || view.status.state === "failing";
  const inboundUrl = `${location.origin}${view.inboundPath}`;
  // Secrets this connector's mode needs that are not set yet (Feishu's long connection needs no Encrypt Key).
  const missing = visibleFields(view.type, {}, view)
    .filter((f) => f.kind === "secret" && f.required && !view.secrets[f.key]?.set)
    .map((f) => f.label);

  const [toggle, toggling] = useAction(async () => {
    if (running) await client.stop(view.id);
    else await client.start(view.id);
    onChanged();
  });
  const [test, testing] = useAction(async () => {
    const result = await client.test(view.id);
    store.dispatch({
      type: "notice",
      kind: result.ok ? "info" : "error",
      text: `${view.name}: ${result.message}`,
    });
  });
  const [remove, removing] = useAction(async () => {
    if (
      !(await askConfirm({
        title: `Delete the connector "${view.name}"?`,
        message: "Its chats stay as channels.",
      }))
    )
      return;
    await client.remove(view.id);
    onChanged();
  });

  return (
    <li class="form" data-testid="connector-row" data-connector-id={view.id} data-state={view.status.state}>
      <div class="inline-form">
        <strong data-testid="connector-row-name">{view.name}</strong>
        <span class="muted">
          {CONNECTOR_LABELS[view.type]} → @{view.agentId}
        </span>
        <span class={STATE_BADGE[view.status.state]} data-testid="connector-state">
          {view.status.state}
        </span>
        {view.status.pending > 0 && <span class="badge badge-warning">{view.status.pending} waiting</span>}
        {view.status.failed > 0 && <span class="badge badge-error">{view.status.failed} failed</span>}
      </div>
      {view.status.error && (
        <p class="form-error" data-testid="connector-error">
          {view.status.state === "failing" ? `${CONNECTOR_LABELS[view.type]} calls are failing: ` : ""}
          {view.status.error}
        </p>
      )}
      {missing.length > 0 && <p class="muted">Still to enter: {missing.join(", ")}</p>}
      <p class="muted connector-inbound">
        {takesInbound(view) ? (
          <>
            Inbound URL: <code data-testid="connector-inbound-url">{inboundUrl}</code>
          </>
        ) : (
          <span data-testid="connector-no-inbound">
            Connects out to the platform: no public address needed.
          </span>
        )}
        {view.status.lastInboundAt ? ` · last message ${formatTime(view.status.lastInboundAt)}` : ""}
        {view.status.rejected > 0 ? ` · ${view.status.rejected} refused` : ""}
      </p>
      <div class="form-actions">
        <button
          type="button"
          class="btn btn-small"
          disabled={toggling}
          onClick={() => void toggle()}
          data-testid="connector-toggle"
        >
          {running ? "Stop" : "Start"}
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={testing}
          onClick={() => void test()}
          data-testid="connector-test"
        >
          Test
        </button>
        <button
          type="button"
          class="btn btn-small"
          aria-pressed={editing}
          onClick={() => setEditing(!editing)}
          data-testid="connector-edit"
        >
          Edit
        </button>
        <button
          type="button"
          class="btn btn-small"
          aria-pressed={showChats}
          onClick={() => setShowChats(!showChats)}
          data-testid="connector-chats-toggle"
        >
          Chats
        </button>
        <button
          type="button"
          class="btn btn-small btn-danger"
          disabled={removing}
          onClick={() => void remove()}
          data-testid="connector-delete"
        >
          Delete
        </button>
      </div>
      {showChats && <ConnectorChats connector={view} />}
      {editing && (
        <ConnectorEditor
          view={view}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

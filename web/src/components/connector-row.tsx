/** One connector: status, inbound URL, outbox counts, start/stop/test/delete, and an editor. */

import { useState } from "preact/hooks";
import { formatTime } from "../format.js";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
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

const STATE_TEXT = {
  running: "connector.state.running",
  starting: "connector.state.starting",
  failing: "connector.state.failing",
  stopped: "connector.state.stopped",
  error: "connector.state.error",
} as const;

function ConnectorEditor({ view, onSaved }: { view: ConnectorView; onSaved: () => void }) {
  const { api, store } = useServices();
  const [name, setName] = useState(view.name);
  const [values, setValues] = useState<FieldValues>(() => valuesOf(view));
  const [save, saving] = useAction(async () => {
    await connectorApi(api).update(view.id, { name: name.trim(), ...fieldsToBody(view.type, values, view) });
    store.dispatch({ type: "notice", kind: "info", text: t("connector.saved", { name: name.trim() }) });
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
        <span>{t("connector.name")}</span>
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
          {view.status.state === "running" || view.status.state === "failing"
            ? t("connector.saveRestart")
            : t("connector.save")}
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
    .map((f) => t(f.label));

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
        title: t("connector.deleteTitle", { name: view.name }),
        message: t("connector.deleteMessage"),
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
          {t(CONNECTOR_LABELS[view.type])} → @{view.agentId}
        </span>
        <span class={STATE_BADGE[view.status.state]} data-testid="connector-state">
          {t(STATE_TEXT[view.status.state])}
        </span>
        {view.status.pending > 0 && (
          <span class="badge badge-warning">{t("connector.waiting", { count: view.status.pending })}</span>
        )}
        {view.status.failed > 0 && (
          <span class="badge badge-error">{t("connector.failed", { count: view.status.failed })}</span>
        )}
      </div>
      {view.status.error && (
        <p class="form-error" data-testid="connector-error">
          {view.status.state === "failing"
            ? t("connector.callsFailing", { platform: t(CONNECTOR_LABELS[view.type]) })
            : ""}
          {view.status.error}
        </p>
      )}
      {missing.length > 0 && (
        <p class="muted">{t("connector.stillToEnter", { fields: missing.join(", ") })}</p>
      )}
      <p class="muted connector-inbound">
        {takesInbound(view) ? (
          <>
            {t("connector.inboundUrl")} <code data-testid="connector-inbound-url">{inboundUrl}</code>
          </>
        ) : (
          <span data-testid="connector-no-inbound">{t("connector.connectsOut")}</span>
        )}
        {view.status.lastInboundAt
          ? ` · ${t("connector.lastMessage", { time: formatTime(view.status.lastInboundAt) })}`
          : ""}
        {view.status.rejected > 0 ? ` · ${t("connector.refused", { count: view.status.rejected })}` : ""}
      </p>
      <div class="form-actions">
        <button
          type="button"
          class="btn btn-small"
          disabled={toggling}
          onClick={() => void toggle()}
          data-testid="connector-toggle"
        >
          {running ? t("connector.stop") : t("connector.start")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={testing}
          onClick={() => void test()}
          data-testid="connector-test"
        >
          {t("connector.test")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          aria-pressed={editing}
          onClick={() => setEditing(!editing)}
          data-testid="connector-edit"
        >
          {t("connector.edit")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          aria-pressed={showChats}
          onClick={() => setShowChats(!showChats)}
          data-testid="connector-chats-toggle"
        >
          {t("connector.chats")}
        </button>
        <button
          type="button"
          class="btn btn-small btn-danger"
          disabled={removing}
          onClick={() => void remove()}
          data-testid="connector-delete"
        >
          {t("common.delete")}
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

/** Connectors: external chat platforms (Telegram, webhook, Feishu/Lark, DingTalk, WeCom) linked to agents. */
import { useEffect, useState } from "preact/hooks";
import { type ConnectorView, connectorApi } from "../components/connector-api.js";
import { ConnectorCreateForm } from "../components/connector-form.js";
import { ConnectorRow } from "../components/connector-row.js";
import { useReportError, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { SessionUser } from "../types.js";

// Status (running, errors, waiting replies) changes on its own; look again this often.
const REFRESH_MS = 5000;

/** The connectors page (owners and admins). */
export function ConnectorsPage({ me }: { me: SessionUser }) {
  const { api } = useServices();
  const report = useReportError();
  const [connectors, setConnectors] = useState<ConnectorView[] | undefined>(undefined);
  const isAdmin = me.role === "owner" || me.role === "admin";
  const reload = () => connectorApi(api).list().then(setConnectors).catch(report);

  useEffect(() => {
    if (!isAdmin) return;
    void reload();
    const timer = setInterval(() => void reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [api, isAdmin]);

  return (
    <section class="page" data-testid="connectors-page">
      <header class="page-head">
        <h2>{t("connector.heading")}</h2>
        <span class="muted">{t("connector.intro")}</span>
      </header>
      <div class="page-body">
        {!isAdmin ? (
          <p class="muted">{t("connector.adminOnly")}</p>
        ) : connectors === undefined ? (
          <p class="muted">{t("common.loading")}</p>
        ) : connectors.length === 0 ? (
          <p class="muted" data-testid="connectors-empty">
            {t("connector.empty")}
          </p>
        ) : (
          <ul class="mcp-list" data-testid="connector-list">
            {connectors.map((view) => (
              <ConnectorRow key={view.id} view={view} onChanged={() => void reload()} />
            ))}
          </ul>
        )}
        {isAdmin && <ConnectorCreateForm onCreated={() => void reload()} />}
      </div>
    </section>
  );
}

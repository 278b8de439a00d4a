/**
 * "No usable model yet" with the way out: admins get a link to Settings → Providers, everyone else
 * is told to ask one. Shown on the home page and above the composer; asks the server on mount, so it
 * follows changes made meanwhile (and a failed run updates it at once through the store).
 */
import { useEffect } from "preact/hooks";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { Link } from "./link.js";

/** Nothing when the default model can run; otherwise what is wrong and where to fix it. */
export function ModelNotice() {
  const { api, store } = useServices();
  const status = useSelector((s) => s.modelStatus);
  const role = useSelector((s) => (s.auth.phase === "ready" ? s.auth.user.role : undefined));
  useEffect(() => {
    api
      .modelStatus()
      .then((next) => store.dispatch({ type: "model_status", status: next }))
      .catch(() => {}); // the notice is a hint; a failed check shows nothing rather than an error
  }, [api]);
  if (!status || status.ready) return null;
  const isAdmin = role === "owner" || role === "admin";
  const text =
    status.problem === "no_key"
      ? t("modelNotice.noKey", {
          model: status.defaultModel ?? "",
          provider: status.provider ?? t("modelNotice.itsProvider"),
        })
      : status.problem === "no_default_model"
        ? t("modelNotice.noModel")
        : (status.message ?? t("modelNotice.unusable"));
  return (
    <p
      class="model-notice"
      role="status"
      data-testid="model-notice"
      data-problem={status.problem ?? "run_failed"}
    >
      <span>{text}</span>
      {isAdmin ? (
        <Link to={{ name: "settings", section: "providers" }} testId="model-notice-link">
          {t("modelNotice.setUp")}
        </Link>
      ) : (
        <span class="muted">{t("modelNotice.askAdmin")}</span>
      )}
    </p>
  );
}

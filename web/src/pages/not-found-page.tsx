/** What an unknown address shows: that nothing lives there, and the ways back. */
import { Link } from "../components/link.js";
import { t } from "../i18n/index.js";

/** The not-found page. */
export function NotFoundPage({ path }: { path: string }) {
  return (
    <section class="page home" data-testid="not-found-page">
      <div class="home-card">
        <h2>{t("notFound.title")}</h2>
        <p>
          {t("notFound.before")} <code class="not-found-path">{path}</code>
          {t("notFound.after")}
        </p>
        <p>
          <Link to={{ name: "home" }} class="btn btn-primary" testId="not-found-home">
            {t("notFound.home")}
          </Link>
        </p>
      </div>
    </section>
  );
}

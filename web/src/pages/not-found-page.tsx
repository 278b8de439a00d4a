/** What an unknown address shows: that nothing lives there, and the ways back. */
import { Link } from "../components/link.js";

/** The not-found page. */
export function NotFoundPage({ path }: { path: string }) {
  return (
    <section class="page home" data-testid="not-found-page">
      <div class="home-card">
        <h2>Page not found</h2>
        <p>
          Nothing lives at <code class="not-found-path">{path}</code>. The link may be mistyped, or what it
          pointed to was deleted.
        </p>
        <p>
          <Link to={{ name: "home" }} class="btn btn-primary" testId="not-found-home">
            Go to your chats
          </Link>
        </p>
      </div>
    </section>
  );
}

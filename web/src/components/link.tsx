/** An anchor that navigates inside the app (plain clicks) and still works as a link (new tab, copy). */
import type { ComponentChildren } from "preact";
import { useServices } from "../hooks.js";
import { type Route, routePath } from "../state/route.js";

export interface LinkProps {
  to: Route;
  class?: string;
  children: ComponentChildren;
  testId?: string;
  current?: boolean;
}

/** In-app link. */
export function Link({ to, class: cls, children, testId, current }: LinkProps) {
  const { navigate } = useServices();
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a
      href={routePath(to)}
      class={cls}
      onClick={onClick}
      data-testid={testId}
      aria-current={current ? "page" : undefined}
    >
      {children}
    </a>
  );
}

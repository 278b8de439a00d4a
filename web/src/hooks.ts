/** Hooks that connect components to the services: the store (render-batched), the route, notices. */
import { useContext, useEffect, useReducer, useRef, useState } from "preact/hooks";
import { errorText } from "./api.js";
import { type Services, ServicesContext } from "./services.js";
import type { AppState } from "./state/app.js";
import { parseRoute, type Route } from "./state/route.js";

/** The services; throws when used outside the app root. */
export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services)
    throw new Error("useServices() outside <ServicesContext.Provider>: render components inside <App>.");
  return services;
}

const pending = new Set<() => void>();
let frameRequested = false;

// Token streams dispatch many times a second; re-render at most once per animation frame.
function inNextFrame(callback: () => void): void {
  pending.add(callback);
  if (frameRequested) return;
  frameRequested = true;
  const flush = () => {
    frameRequested = false;
    const callbacks = [...pending];
    pending.clear();
    for (const cb of callbacks) cb();
  };
  if (typeof requestAnimationFrame === "function" && document.visibilityState === "visible") {
    requestAnimationFrame(flush);
  } else {
    setTimeout(flush, 50);
  }
}

/** A slice of the app state; the component re-renders when the slice changes (by identity). */
export function useSelector<T>(selector: (state: AppState) => T): T {
  const { store } = useServices();
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const selectorRef = useRef(selector);
  selectorRef.current = selector;
  const value = selector(store.getState());
  const valueRef = useRef(value);
  valueRef.current = value;
  useEffect(() => {
    const check = () => {
      if (!Object.is(selectorRef.current(store.getState()), valueRef.current)) rerender(0);
    };
    const unsubscribe = store.subscribe(() => inNextFrame(check));
    // The state may have moved between render and subscription.
    check();
    return () => {
      unsubscribe();
      pending.delete(check);
    };
  }, [store]);
  return value;
}

/** The current route, following history navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  return route;
}

/** Shows an error (from anything thrown) as a notice. */
export function useReportError(): (err: unknown) => void {
  const { store } = useServices();
  return (err: unknown) => store.dispatch({ type: "notice", kind: "error", text: errorText(err) });
}

/**
 * What an action says when it worked: a sentence, or `undefined` to say nothing (its effect shows
 * on screen). Either way the error notices of earlier attempts go: they describe a problem that is
 * gone.
 */
export type SuccessText<R> = string | ((result: R) => string | undefined);

/** Runs an async action with a busy flag and error reporting; returns [run, busy]. */
export function useAction<A extends unknown[], R = unknown>(
  action: (...args: A) => Promise<R>,
  success?: SuccessText<R>,
): [(...args: A) => Promise<void>, boolean] {
  const { store } = useServices();
  const report = useReportError();
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    try {
      const result = await action(...args);
      const text = typeof success === "function" ? success(result) : success;
      // Earlier errors (and, with a new success line, the previous one) describe a state that is gone.
      for (const notice of store.getState().notices)
        if (notice.kind === "error" || text !== undefined) store.dispatch({ type: "dismiss", id: notice.id });
      if (text !== undefined) store.dispatch({ type: "notice", kind: "info", text });
    } catch (err) {
      report(err);
    } finally {
      setBusy(false);
    }
  };
  return [run, busy];
}

/**
 * The app's long-lived objects and the context components reach them through: the API client, the
 * store, the live connection and navigation.
 */
import { createContext } from "preact";
import type { ApiClient } from "./api.js";
import type { LiveConnection } from "./live.js";
import type { AppAction, AppState } from "./state/app.js";
import type { Route } from "./state/route.js";
import type { Store } from "./state/store.js";

export interface Services {
  api: ApiClient;
  store: Store<AppState, AppAction>;
  live: LiveConnection;
  navigate(route: Route, options?: { replace?: boolean }): void;
}

export const ServicesContext = createContext<Services | null>(null);

/**
 * JS tool plugins. Plugins run inside the Dimsum process with its full rights; see load-plugins.ts.
 */
export {
  defaultPluginDirs,
  loadPlugins,
  type PluginLoadError,
  type PluginsLoadResult,
  toolFromPlugin,
} from "./load-plugins.js";

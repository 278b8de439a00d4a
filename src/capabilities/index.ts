/** One assembly of a run's tools and context layers, for the CLI and the team server alike. */
export {
  CapabilityAssembly,
  type CapabilityServices,
  type CatalogueEntry,
  type McpToolSource,
  type RunCapabilities,
  type RunRequest,
  type TeamToolSet,
  type ToolSource,
} from "./assembly.js";
export { memoryLayer, personaLayer, skillLayer } from "./context-layers.js";
export { type Extensions, loadExtensions, NO_EXTENSIONS } from "./extensions.js";
export { decideShellOffer, resolveShellOffer, type ShellOffer, toolsLeftOut } from "./shell-offer.js";

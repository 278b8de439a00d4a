/** Custom HTTP tools: REST endpoints described in JSON, with templates, secrets from env and extraction. */
export {
  type CheckedHttpTool,
  checkHttpToolDefinition,
  DEFAULT_MAX_RESPONSE_CHARS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type DefinitionResult,
  type HttpRequestTemplate,
  type HttpStepDefinition,
  type HttpToolDefinition,
} from "./definition.js";
export {
  extractAll,
  extractPath,
  type JsonPath,
  type PathSegment,
  parsePath,
  parsePathList,
} from "./extract.js";
export { buildPlan, createHttpTool, type HttpToolOptions } from "./http-tool.js";
export {
  defaultHttpToolDirs,
  type HttpToolLoadError,
  type HttpToolsLoadResult,
  type LoadHttpToolsOptions,
  loadHttpTools,
  shippedHttpToolsDir,
} from "./load-http-tools.js";
export { createRedactor, MIN_SECRET_LENGTH, REDACTED, type Redactor } from "./redact.js";
export {
  type HttpRequestPlan,
  type HttpResponse,
  type SendOptions,
  sendHttpRequest,
} from "./send-request.js";
export {
  type Placeholder,
  parseTemplate,
  placeholdersIn,
  renderJsonValue,
  renderTemplate,
  type TemplatePart,
  type TemplateScope,
} from "./template.js";

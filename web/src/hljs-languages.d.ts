// highlight.js ships no declarations for its per-language entry points; they all export a LanguageFn.
declare module "highlight.js/lib/languages/*" {
  import type { LanguageFn } from "highlight.js";

  const language: LanguageFn;
  export default language;
}

/**
 * The language switch. On the sign-in page it changes this browser only; in Settings → Account
 * (`saveToAccount`) it is kept with the person, so it follows them to other browsers and devices.
 */
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { isLocale, LOCALE_NAMES, LOCALES, setLocale, t, useLocale } from "../i18n/index.js";

export function LanguageSelect({ saveToAccount = false }: { saveToAccount?: boolean }) {
  const { api, store } = useServices();
  const locale = useLocale();
  const choose = async (value: string) => {
    if (!isLocale(value) || value === locale) return;
    try {
      if (saveToAccount) await api.setLocale(value);
      await setLocale(value);
      if (saveToAccount) store.dispatch({ type: "notice", kind: "info", text: t("language.saved") });
    } catch (err) {
      store.dispatch({ type: "notice", kind: "error", text: errorText(err) });
    }
  };
  return (
    <label class="field language-select">
      <span>{t("language.label")}</span>
      <select
        value={locale}
        lang={locale}
        onChange={(e) => void choose(e.currentTarget.value)}
        data-testid="language-select"
      >
        {LOCALES.map((code) => (
          <option key={code} value={code} lang={code}>
            {LOCALE_NAMES[code]}
          </option>
        ))}
      </select>
    </label>
  );
}

/** "Export": downloads an agent or a group as a template file (JSON) another Dimsum can import. */
import { useAction } from "../hooks.js";
import { t } from "../i18n/index.js";
import { downloadTemplate } from "../template-file.js";
import type { Template } from "../types.js";

export interface ExportTemplateButtonProps {
  /** Asks the server for the template. */
  load: () => Promise<Template>;
  label: string;
  title: string;
  testId: string;
}

/** A button that downloads the template and says where it went. */
export function ExportTemplateButton({ load, label, title, testId }: ExportTemplateButtonProps) {
  const [run, busy] = useAction(
    async () => {
      const template = await load();
      downloadTemplate(template);
      return template;
    },
    (template) => t("exportTemplate.done", { name: template.name }),
  );
  return (
    <button
      type="button"
      class="btn btn-small"
      disabled={busy}
      title={title}
      onClick={() => void run()}
      data-testid={testId}
    >
      ⤓ {label}
    </button>
  );
}

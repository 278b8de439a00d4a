/** Who sees one knowledge base: the Visibility field and its Save, in the base's detail. */
import { useEffect, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { type KnowledgeBase, knowledgeApi } from "./knowledge-api.js";
import { useMe } from "./people.js";
import { mayChangeVisibility, VisibilityField, visibilityOf, visibilityPatch } from "./visibility-field.js";

export function KnowledgeVisibility({ base, onSaved }: { base: KnowledgeBase; onSaved: () => void }) {
  const { api } = useServices();
  const me = useMe();
  const [value, setValue] = useState(() => visibilityOf(base));
  useEffect(
    () => setValue(visibilityOf(base)),
    [base.id, base.visibility, (base.allowedUsers ?? []).join(",")],
  );
  const patch = visibilityPatch(value, base);
  const [save, saving] = useAction(
    async () => {
      if (!patch) return;
      await knowledgeApi(api).setVisibility(base, patch);
      onSaved();
      return t("kb.visibilitySaved");
    },
    (text) => text,
  );
  return (
    <div class="kb-visibility" data-testid="kb-visibility">
      <VisibilityField
        resource={base}
        value={value}
        onChange={setValue}
        name={`kbVisibility-${base.id}`}
        testId="kb-visibility-field"
      />
      {mayChangeVisibility(me, base) && (
        <div class="form-actions">
          <button
            type="button"
            class="btn btn-small btn-primary"
            disabled={saving || !patch}
            onClick={() => void save()}
            data-testid="kb-visibility-save"
          >
            {t("kb.visibilitySave")}
          </button>
        </div>
      )}
    </div>
  );
}

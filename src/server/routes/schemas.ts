/** Request schemas shared by the account routes. */
import * as z from "zod";
import { ROLES } from "../auth/user-store.js";

export const usernameSchema = z
  .string()
  .trim()
  .regex(
    // An email is a username too: an account made for someone who signs in through single sign-on.
    /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}(@[A-Za-z0-9.-]{1,200})?$/,
    "1-40 letters, digits, '.', '_', '+' or '-', starting with a letter or digit (or an email address)",
  );

/** New passwords: long enough to resist guessing, short enough to keep hashing cheap. */
export const newPasswordSchema = z
  .string()
  .min(8, "at least 8 characters")
  .max(1024, "at most 1024 characters");

export const roleSchema = z
  .enum(ROLES as [string, ...string[]])
  .transform((r) => r as (typeof ROLES)[number]);

export const loginSchema = z.object({
  username: z.string().trim().min(1).max(100),
  password: z.string().min(1).max(1024),
});

/** The languages the web UI speaks; the API itself answers in English with stable error codes. */
export const localeSchema = z.enum(["en", "zh-CN"]);

export const setupSchema = z.object({
  username: usernameSchema,
  password: newPasswordSchema,
  /** The owner's language: kept as theirs, and the starter agents are given in it. */
  locale: localeSchema.optional(),
});

export const localeChangeSchema = z.object({ locale: localeSchema });

export const passwordChangeSchema = z.object({
  currentPassword: z.string().min(1).max(1024),
  newPassword: newPasswordSchema,
});

export const createUserSchema = z.object({
  username: usernameSchema,
  password: newPasswordSchema,
  role: roleSchema,
});

export const patchUserSchema = z
  .object({
    role: roleSchema.optional(),
    password: newPasswordSchema.optional(),
    /** True: the account's sessions and API tokens end, and it cannot sign in until enabled again. */
    disabled: z.boolean().optional(),
  })
  .refine(
    (p) => p.role !== undefined || p.password !== undefined || p.disabled !== undefined,
    "give a role, a password or disabled to change",
  );

export const tokenNameSchema = z.object({ name: z.string().trim().min(1).max(100) });

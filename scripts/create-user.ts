/**
 * npm run users:create -- --email a@b.example --role admin [--name "A B"] [--password-env VAR]
 * The password is read from the environment variable named by --password-env (default
 * DLQ_ADMIN_PASSWORD), never from the command line, where `ps` would show it.
 * Idempotent: when the user exists, its role and password are updated (and it is re-enabled).
 */
import "dotenv/config";
import { parseArgs } from "node:util";
import { closeDb } from "@/lib/db";
import { createUser, getUserByEmail, setPassword, updateUser } from "@/lib/auth/users";
import { isRole } from "@/lib/auth/permissions";
import { isAppError } from "@/lib/errors";

function fail(message: string): never {
  console.error(`users:create: ${message}`);
  process.exit(2);
}

async function main() {
  const { values } = parseArgs({
    options: {
      email: { type: "string" },
      role: { type: "string" },
      name: { type: "string" },
      "password-env": { type: "string" },
      password: { type: "string" },
    },
    strict: true,
  });
  if (values.password !== undefined)
    fail(
      "passwords are not accepted as arguments (they show in `ps`); put it in an environment variable and pass --password-env VAR",
    );
  if (!values.email) fail("--email is required");
  if (!isRole(values.role)) fail("--role must be viewer, operator or admin");
  const envName = values["password-env"] ?? "DLQ_ADMIN_PASSWORD";
  const password = process.env[envName];
  if (!password) fail(`set the password in the environment variable ${envName}`);

  const existing = await getUserByEmail(values.email);
  if (existing) {
    await setPassword(existing.id, password);
    await updateUser(existing.id, {
      role: values.role,
      disabled: false,
      ...(values.name !== undefined ? { name: values.name } : {}),
    });
    console.log(`Updated ${existing.email}: role ${values.role}, password changed.`);
  } else {
    const user = await createUser({ email: values.email, name: values.name, role: values.role, password });
    console.log(`Created ${user.email} (${user.role}).`);
  }
}

main()
  .catch((e) => {
    console.error(`users:create: ${isAppError(e) ? e.userMessage : e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb());

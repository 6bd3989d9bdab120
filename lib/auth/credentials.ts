import { z } from "zod";

/**
 * What the sign-in form may send. Not z.email(): local installs use addresses such as
 * admin@localhost. The user store validates addresses when users are created; here the address is
 * only a lookup key, so it only has to be plausible and bounded.
 */
export const credentialsSchema = z.object({
  email: z
    .string()
    .trim()
    .toLowerCase()
    .min(3)
    .max(320)
    .regex(/^[^\s@]+@[^\s@]+$/),
  password: z.string().min(1).max(1024),
});

import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="Only admins see and revoke every user's API tokens.">
      Your own tokens are on your profile page.
    </ForbiddenPage>
  );
}

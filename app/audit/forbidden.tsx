import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="You cannot read the audit log.">
      Reading the audit history needs the operator or admin role.
    </ForbiddenPage>
  );
}

import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="Your role cannot start a redrive." testId="redrive-forbidden">
      Redrives are started by operators and admins; you can follow them on the redrives page.
    </ForbiddenPage>
  );
}

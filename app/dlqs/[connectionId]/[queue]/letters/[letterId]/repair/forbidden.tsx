import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="Your role cannot repair letters." testId="repair-forbidden">
      Repair and resubmit is for admins.
    </ForbiddenPage>
  );
}

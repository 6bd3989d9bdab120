import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="Your role cannot discard letters." testId="discard-forbidden">
      Discarding is for admins.
    </ForbiddenPage>
  );
}

import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return (
    <ForbiddenPage title="Your role cannot repair letters." testId="repair-group-forbidden">
      Repairing a group of letters with a patch is for admins; operators can redrive the group as it is.
    </ForbiddenPage>
  );
}

import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return <ForbiddenPage title="Only admins create, change and delete alert rules." />;
}

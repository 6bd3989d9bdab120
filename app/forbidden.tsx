import { ForbiddenPage } from "@/components/auth/forbidden-page";

export default function Forbidden() {
  return <ForbiddenPage title="You cannot open this page." />;
}

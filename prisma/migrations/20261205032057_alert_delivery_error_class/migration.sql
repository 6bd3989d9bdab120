-- AlterTable
ALTER TABLE "alert_deliveries" ADD COLUMN     "last_error_class" TEXT;

-- Rows written before the column held "<class> — <detail>" in last_error: split the ones that
-- start with a known class (lib/alerts/failure.ts FAILURE_CLASSES) so the detail column holds
-- only what admins may read. Others stay whole, read as "delivery failed" (readFailure).
UPDATE "alert_deliveries" d
SET "last_error_class" = k.cls,
    "last_error" = substr(d."last_error", length(k.cls) + 4)
FROM (VALUES
  ('TLS: certificate name mismatch'),
  ('TLS: untrusted certificate'),
  ('TLS: certificate expired'),
  ('TLS: certificate not yet valid'),
  ('TLS: certificate revoked'),
  ('TLS: handshake failed'),
  ('connection refused'),
  ('connection reset'),
  ('timed out'),
  ('network unreachable'),
  ('network error'),
  ('DNS: name not found'),
  ('DNS: lookup failed'),
  ('refused by the webhook policy'),
  ('HTTP 3xx: redirect not followed'),
  ('HTTP 4xx'),
  ('HTTP 5xx'),
  ('HTTP error'),
  ('rule deleted before sending'),
  ('rule disabled before sending'),
  ('delivery failed')
) AS k(cls)
WHERE d."last_error_class" IS NULL
  AND d."last_error" LIKE replace(replace(k.cls, '%', '\%'), '_', '\_') || ' — %';

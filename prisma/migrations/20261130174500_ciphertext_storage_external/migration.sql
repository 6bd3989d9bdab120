-- Hand-written (Prisma's schema cannot express column storage).
-- Payloads are AES-GCM ciphertext, which cannot compress: with rows of about 2 KB crossing the TOAST
-- threshold, Postgres tried to compress every one of them on insert, for nothing. EXTERNAL keeps
-- large values out of line, uncompressed.
ALTER TABLE "triage_letters" ALTER COLUMN "payload_ciphertext" SET STORAGE EXTERNAL;
ALTER TABLE "archived_letters" ALTER COLUMN "payload_ciphertext" SET STORAGE EXTERNAL;

-- CreateTable
CREATE TABLE "masking_config_versions" (
    "version" INTEGER NOT NULL,
    "rules" JSONB NOT NULL,
    "sensitive" JSONB NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "masking_config_versions_pkey" PRIMARY KEY ("version")
);

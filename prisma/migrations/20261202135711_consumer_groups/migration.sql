-- CreateTable
CREATE TABLE "consumer_group_status" (
    "connection_id" TEXT NOT NULL,
    "group_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "protocol" TEXT,
    "members" JSONB NOT NULL DEFAULT '[]',
    "problem" TEXT,
    "coordinator" INTEGER NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "consumer_group_status_pkey" PRIMARY KEY ("connection_id","group_id")
);

-- CreateTable
CREATE TABLE "consumer_group_partitions" (
    "connection_id" TEXT NOT NULL,
    "group_id" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "committed" BIGINT,
    "start_offset" BIGINT,
    "end_offset" BIGINT NOT NULL,
    "lag" BIGINT NOT NULL,
    "member" TEXT,
    "since" TIMESTAMPTZ(3),
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "consumer_group_partitions_pkey" PRIMARY KEY ("connection_id","group_id","topic","partition")
);

-- CreateTable
CREATE TABLE "consumer_group_rounds" (
    "connection_id" TEXT NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,
    "error" TEXT,
    "calls" INTEGER NOT NULL,
    "groups" INTEGER NOT NULL,

    CONSTRAINT "consumer_group_rounds_pkey" PRIMARY KEY ("connection_id")
);

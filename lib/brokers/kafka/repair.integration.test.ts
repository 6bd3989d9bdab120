/**
 * Repair and resubmit on a real Kafka (issue 18): the shared repair contract on the redrive
 * contract's fixture, plus what only Kafka has (the key, the copy's coordinates, the handled mark,
 * repeated header names, message and correlation id headers).
 * Needs Kafka (`bash scripts/services.sh start kafka`) and Postgres (DATABASE_URL, migrated).
 */
import { runRepairContract } from "@/lib/brokers/contract-repair";
import { contractFixture } from "@/lib/brokers/kafka/contract-fixture";

runRepairContract("kafka", contractFixture);

// Repair and resubmit on real SQS servers: the shared repair contract on ElasticMQ (standard and
// FIFO) and moto, on the same fixture as the redrive contract (contract-fixture.ts).
import { runRepairContract } from "@/lib/brokers/contract-repair";
import { SQS_CONTRACT_SERVERS, sqsContractFixture } from "@/lib/brokers/sqs/contract-fixture";

for (const { label, endpoint, over, fifo } of SQS_CONTRACT_SERVERS) {
  runRepairContract(label, sqsContractFixture(endpoint, over, fifo));
}
